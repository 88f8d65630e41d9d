import Hummingbird

/// The console's languages: Simplified Chinese and English, from the `lang` cookie (the operator's switch), else
/// the browser's `Accept-Language`, else English.
enum ConsoleLanguage: String, Sendable, CaseIterable {
    case english = "en"
    case simplifiedChinese = "zh-Hans"

    static let cookieName = "ordersafe_lang"

    init(_ request: Request) {
        if let chosen = request.cookies[Self.cookieName].flatMap({ ConsoleLanguage(rawValue: $0.value) }) {
            self = chosen
            return
        }
        self = Self.preferred(acceptLanguage: request.headers.value(of: .acceptLanguage) ?? "")
    }

    /// The first of our languages in the header's order of preference (`q` weights honoured, at most 32 entries).
    static func preferred(acceptLanguage header: String) -> ConsoleLanguage {
        var best: (language: ConsoleLanguage, weight: Int)?
        for entry in header.split(separator: ",").prefix(32) {
            let parts = entry.split(separator: ";")
            let tag = parts.first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            var weight = 1000
            for parameter in parts.dropFirst() {
                let pair = parameter.trimmingCharacters(in: .whitespaces)
                if pair.hasPrefix("q=") { weight = Self.thousandths(String(pair.dropFirst(2))) }
            }
            let language: ConsoleLanguage? =
                tag == "zh" || tag.hasPrefix("zh-")
                ? .simplifiedChinese : (tag == "en" || tag.hasPrefix("en-") ? .english : nil)
            if let language, weight > 0, weight > (best?.weight ?? 0) { best = (language, weight) }
        }
        return best?.language ?? .english
    }

    /// A `q` value (0 to 1, up to three decimals) in thousandths; 0 when malformed.
    private static func thousandths(_ text: String) -> Int {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first.flatMap({ Int($0) }), (0...1).contains(whole), text.utf8.count <= 5 else {
            return 0
        }
        var fraction = 0
        if parts.count == 2 {
            let digits = parts[1]
            guard digits.count <= 3, digits.allSatisfy(\.isASCII),
                let value = Int(digits.padding(toLength: 3, withPad: "0", startingAt: 0))
            else { return 0 }
            fraction = value
        }
        return min(whole * 1000 + fraction, 1000)
    }

    /// The other language, offered by the switch.
    var other: ConsoleLanguage { self == .english ? .simplifiedChinese : .english }

    /// The language's own name, for the switch.
    var ownName: String { self == .english ? "English" : "中文" }

    /// The `lang` attribute of the page.
    var htmlTag: String { self == .english ? "en" : "zh-Hans" }
}
