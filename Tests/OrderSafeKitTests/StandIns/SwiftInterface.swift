import Foundation

/// The public declarations of a Swift interface or source text, enough to compare two of them: each one's path
/// (`Transaction.OwnershipType`), kind, signature (a function's argument labels), main-actor isolation and the
/// version of each platform it is available from (its own `@available`, else its container's). A line-based reader
/// for the shapes Xcode's generated interfaces, the toolchain's `.swiftinterface` files and our stand-ins use (one
/// declaration per line), not a Swift parser.
struct SwiftInterface {
    struct Declaration: Hashable, CustomStringConvertible {
        var path: String
        var kind: String
        var mainActor: Bool
        /// The version each platform it names introduces it in, as written (`["iOS": "16.0", "macOS": "13.0"]`).
        var versions: [String: String] = [:]
        /// The platforms it is marked unavailable on itself (`@available(visionOS, unavailable)`).
        var unavailable: Set<String> = []
        /// iOS version it is introduced in; nil: not said (StoreKit 2's floor, 15.0).
        var iOS: String? { versions["iOS"] }
        var description: String {
            "\(kind) \(path)\(mainActor ? " @MainActor" : "")\(iOS.map { " iOS \($0)" } ?? "")"
                + (unavailable.isEmpty ? "" : " unavailable on \(unavailable.sorted().joined(separator: ", "))")
        }
    }

    /// Every declaration by path; overloads that differ only in their parameters' types share one path.
    private(set) var overloads: [String: [Declaration]] = [:]

    /// The first declaration of each path.
    var declarations: [String: Declaration] { overloads.compactMapValues(\.first) }

    init(_ text: String) {
        var containers: [(path: String, kind: String, isPublic: Bool, versions: [String: String], depth: Int)] = []
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
                        ? inherited?.kind == "enum" && inherited?.isPublic == true
                        : line.contains("public ") || line.hasPrefix("open ") || line.contains(" open ")
                    let base = inherited?.path
                    let path: String
                    if kind == "extension" {
                        path = name
                    } else {
                        path = [base, name].compactMap { $0 }.joined(separator: ".")
                    }
                    let own = Self.versions(declared)
                    let versions = kind == "extension" ? own : (inherited?.versions ?? [:]).merging(own) { $1 }
                    if isPublic && kind != "extension" {
                        let mainActor = declared.contains { $0.contains("@MainActor") }
                        for each in kind == "case" ? Self.caseNames(line) : [name] {
                            let eachPath = [base, each].compactMap { $0 }.joined(separator: ".")
                            overloads[eachPath, default: []].append(
                                Declaration(
                                    path: eachPath, kind: kind, mainActor: mainActor, versions: versions,
                                    unavailable: Self.unavailable(declared)))
                        }
                    }
                    if isType, line.contains("{") {
                        let typeVersions =
                            kind == "extension"
                            ? (overloads[name]?.first?.versions ?? [:]).merging(own) { $1 } : versions
                        containers.append((path, kind, isPublic || kind == "extension", typeVersions, depth))
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
            "public", "open", "static", "final", "nonisolated", "mutating", "override", "@frozen", "@MainActor",
            "@inlinable",
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

    /// The versions of `@available(iOS 16.0, macOS 13.0, *)` among `attributes` (the first to name a platform wins).
    static func versions(_ attributes: [String]) -> [String: String] {
        var versions: [String: String] = [:]
        for attribute in attributes where attribute.hasPrefix("@available(") {
            let inside = attribute.dropFirst("@available(".count).prefix { $0 != ")" }
            for part in inside.split(separator: ",") {
                let words = part.split(separator: " ")
                guard words.count == 2, let first = words[1].first, first.isNumber,
                    words[1].allSatisfy({ $0.isNumber || $0 == "." })
                else { continue }
                if versions[String(words[0])] == nil { versions[String(words[0])] = String(words[1]) }
            }
        }
        return versions
    }
}
