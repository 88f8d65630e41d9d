import Foundation

/// The languages OrderSafeKit speaks to users in.
public enum MessageLanguage: String, Sendable, CaseIterable {
    case english = "en"
    case simplifiedChinese = "zh-Hans"

    /// The first of the user's preferred languages OrderSafeKit has (any Chinese but Traditional maps to
    /// Simplified Chinese), English otherwise.
    public static func preferred(_ languages: [String] = Locale.preferredLanguages) -> MessageLanguage {
        for language in languages {
            let lowered = language.lowercased()
            if lowered.hasPrefix("zh") {
                if lowered.contains("hant") || lowered.hasSuffix("-tw") || lowered.hasSuffix("-hk")
                    || lowered.hasSuffix("-mo")
                {
                    continue
                }
                return .simplifiedChinese
            }
            if lowered.hasPrefix("en") { return .english }
        }
        return .english
    }
}

/// User-facing texts from the package's `Localizable.strings` (one per language folder), looked up with
/// Foundation's own bundle localization.
enum Messages {
    private static let bundles: [MessageLanguage: Bundle] = {
        var found: [MessageLanguage: Bundle] = [:]
        for language in MessageLanguage.allCases {
            // SwiftPM on Linux lowercases the folder name (zh-hans.lproj); Apple keeps it as written.
            for name in [language.rawValue, language.rawValue.lowercased()] {
                if let path = Bundle.module.path(forResource: name, ofType: "lproj"), let bundle = Bundle(path: path) {
                    found[language] = bundle
                    break
                }
            }
        }
        return found
    }()

    /// The text for `key` in `language`, with `{name}` placeholders filled; the key itself if the text is missing
    /// (a test keeps every key present in every language).
    static func text(_ key: String, _ language: MessageLanguage, _ values: [String: String] = [:]) -> String {
        var text = bundles[language]?.localizedString(forKey: key, value: nil, table: "Localizable") ?? key
        for (name, value) in values {
            text = text.replacingOccurrences(of: "{\(name)}", with: value)
        }
        return text
    }

    /// Whether `language` has a text for `key`.
    static func has(_ key: String, _ language: MessageLanguage) -> Bool {
        text(key, language) != key
    }
}
