import Foundation

/// The public declarations of a Swift interface or source text, enough to compare two of them: each one's path
/// (`Transaction.OwnershipType`), kind, signature (a function's argument labels), main-actor isolation and the iOS
/// version it is available from (its own `@available`, else its container's). A line-based reader for the shapes
/// Xcode's generated interfaces and our stand-ins use (one declaration per line), not a Swift parser.
struct SwiftInterface {
    struct Declaration: Hashable, CustomStringConvertible {
        var path: String
        var kind: String
        var mainActor: Bool
        /// iOS version it is introduced in, as written (`15.0`); nil: not said (StoreKit 2's floor, 15.0).
        var iOS: String?
        /// The platforms it is marked unavailable on itself (`@available(visionOS, unavailable)`).
        var unavailable: Set<String> = []
        var description: String {
            "\(kind) \(path)\(mainActor ? " @MainActor" : "")\(iOS.map { " iOS \($0)" } ?? "")"
                + (unavailable.isEmpty ? "" : " unavailable on \(unavailable.sorted().joined(separator: ", "))")
        }
    }

    private(set) var declarations: [String: Declaration] = [:]

    init(_ text: String) {
        var containers: [(path: String, kind: String, isPublic: Bool, iOS: String?, depth: Int)] = []
        var depth = 0
        var attributes: [String] = []
        for line in Self.logicalLines(text) {
            let inherited = containers.last
            if line.hasPrefix("@"), Self.declaration(line) == nil {
                attributes.append(line)
            } else {
                let declared = attributes + [line]
                attributes = []
                if let (kind, name, isType) = Self.declaration(line) {
                    let isPublic =
                        kind == "case"
                        ? inherited?.kind == "enum" && inherited?.isPublic == true : line.contains("public ")
                    let base = inherited?.path
                    let path: String
                    if kind == "extension" {
                        path = name
                    } else {
                        path = [base, name].compactMap { $0 }.joined(separator: ".")
                    }
                    let iOS = Self.iOS(declared) ?? (kind == "extension" ? nil : inherited?.iOS)
                    if isPublic && kind != "extension" {
                        let mainActor = declared.contains { $0.contains("@MainActor") }
                        for each in kind == "case" ? Self.caseNames(line) : [name] {
                            let eachPath = [base, each].compactMap { $0 }.joined(separator: ".")
                            declarations[eachPath] = Declaration(
                                path: eachPath, kind: kind, mainActor: mainActor, iOS: iOS,
                                unavailable: Self.unavailable(declared))
                        }
                    }
                    if isType, line.contains("{") {
                        let typeIOS = kind == "extension" ? (Self.iOS(declared) ?? declarations[name]?.iOS) : iOS
                        containers.append((path, kind, isPublic || kind == "extension", typeIOS, depth))
                    }
                }
            }
            depth += line.filter { $0 == "{" }.count - line.filter { $0 == "}" }.count
            while let last = containers.last, depth <= last.depth { containers.removeLast() }
            if line.hasPrefix("}") { attributes = [] }  // an attribute left dangling by the condensed interface
        }
    }

    /// The lines without comments, a declaration whose parameters run over several lines joined into one.
    static func logicalLines(_ text: String) -> [String] {
        var lines: [String] = []
        var pending = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.components(separatedBy: "//")[0].trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            pending += pending.isEmpty ? line : " " + line
            if pending.filter({ $0 == "(" }).count <= pending.filter({ $0 == ")" }).count {
                lines.append(pending)
                pending = ""
            }
        }
        if !pending.isEmpty { lines.append(pending) }
        return lines
    }

    /// The names of a `case a, b(Int), c` line.
    static func caseNames(_ line: String) -> [String] {
        var names: [String] = []
        var depth = 0
        var current = ""
        for character in line.drop(while: { $0 != " " }) {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if character == ",", depth == 0 {
                names.append(current)
                current = ""
            } else if depth == 0, character != ")" {
                current.append(character)
            }
        }
        names.append(current)
        return names.map { String($0.trimmingCharacters(in: .whitespaces).prefix { $0.isLetter || $0.isNumber }) }
            .filter { !$0.isEmpty }
    }

    /// (kind, name or function signature, whether it opens a type) of a declaration line, or nil.
    static func declaration(_ line: String) -> (String, String, Bool)? {
        let words = line.replacingOccurrences(of: "(", with: " (").split(separator: " ").map(String.init)
        let modifiers: Set<String> = [
            "public", "static", "final", "nonisolated", "mutating", "override", "@frozen", "@MainActor", "@inlinable",
            "indirect", "@discardableResult", "@preconcurrency",
        ]
        guard let index = words.firstIndex(where: { !modifiers.contains($0) && !$0.hasPrefix("@") }),
            index + 1 < words.count || words[index] == "init"
        else { return nil }
        let keyword = words[index]
        let rest = index + 1 < words.count ? words[index + 1] : ""
        let name = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." })
        switch keyword {
        case "struct", "enum", "class", "actor", "protocol", "extension":
            return name.isEmpty ? nil : (keyword, name, true)
        case "func":
            return name.isEmpty ? nil : ("func", name + labels(line), false)
        case "init", "init?":
            return ("init", "init" + labels(line), false)
        case "var", "let":
            return name.isEmpty ? nil : ("property", name, false)
        case "case":
            return name.isEmpty ? nil : ("case", name, false)
        case "typealias":
            return name.isEmpty ? nil : ("typealias", name, false)
        default:
            return nil
        }
    }

    /// `(label:label:)` of a function or initializer line.
    static func labels(_ line: String) -> String {
        guard let open = line.firstIndex(of: "(") else { return "()" }
        var depth = 0
        var parameters: [String] = []
        var current = ""
        for character in line[line.index(after: open)...] {
            if character == "(" || character == "<" || character == "[" { depth += 1 }
            if character == ")" || character == ">" || character == "]" {
                if depth == 0 { break }
                depth -= 1
            }
            if character == ",", depth == 0 {
                parameters.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.trimmingCharacters(in: .whitespaces).isEmpty { parameters.append(current) }
        let labels = parameters.compactMap { parameter -> String? in
            guard let colon = parameter.firstIndex(of: ":") else { return nil }
            let names = parameter[..<colon].split(separator: " ")
            return names.first.map { "\($0):" }
        }
        return "(" + labels.joined() + ")"
    }

    /// The platforms of `@available(PLATFORM, unavailable)` among `attributes`.
    static func unavailable(_ attributes: [String]) -> Set<String> {
        Set(
            attributes.compactMap { attribute in
                guard attribute.hasPrefix("@available("), attribute.hasSuffix(", unavailable)") else { return nil }
                return String(attribute.dropFirst("@available(".count).dropLast(", unavailable)".count))
            })
    }

    /// The iOS version of the first `@available(iOS x, …)` among `attributes`.
    static func iOS(_ attributes: [String]) -> String? {
        for attribute in attributes where attribute.hasPrefix("@available(iOS ") {
            let version = attribute.dropFirst("@available(iOS ".count).prefix { $0.isNumber || $0 == "." }
            if !version.isEmpty { return String(version) }
        }
        return nil
    }
}
