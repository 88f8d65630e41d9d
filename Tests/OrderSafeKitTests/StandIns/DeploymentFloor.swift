import Foundation

/// The lowest version of each platform a package declares (`platforms: [.iOS(.v15), .macOS(.v12)]`), which of an
/// interface's names need more, and where a source uses one of them outside an `@available` or `if #available` that
/// covers it.
struct DeploymentFloor {
    typealias Versions = [String: [Int]]

    /// e.g. `["iOS": [15], "macOS": [12]]`.
    let versions: Versions

    struct NoPlatforms: Error {}

    init(packageManifest: String) throws {
        var versions: Versions = [:]
        for match in packageManifest.matches(of: /\.(iOS|macOS|tvOS|watchOS|visionOS)\(\.v(\d+)(?:_(\d+))?\)/) {
            versions[String(match.1)] = [Int(match.2) ?? 0] + (match.3.flatMap { Int($0) }.map { [$0] } ?? [])
        }
        guard !versions.isEmpty else { throw NoPlatforms() }
        self.versions = versions
    }

    /// Names newer than the floor: top-level types by name, functions by `name(firstLabel:` (or `name()`), each with
    /// the versions it needs on the platforms where it is newer.
    struct Newer {
        var types: [String: Versions] = [:]
        var functions: [String: Versions] = [:]
    }

    /// The function keys the sources declare themselves (`func nanoseconds(_ seconds:` is `nanoseconds(_:`): a call
    /// of one is taken for ours, not a toolchain's namesake.
    static func declaredFunctions(in sources: [String]) -> Set<String> {
        var keys: Set<String> = []
        for source in sources {
            for match in code(source).matches(of: /func\s+(\w+)\s*(?:<[^>]*>)?\s*\(\s*(\w*)/) {
                keys.insert(match.2.isEmpty ? "\(match.1)()" : "\(match.1)(\(match.2):")
            }
        }
        return keys
    }

    func newer(in interfaces: [SwiftInterface]) -> Newer {
        var types: [String: [Versions]] = [:]
        var functions: [String: [Versions]] = [:]
        for interface in interfaces {
            for declaration in interface.overloads.values.joined() {
                let needs = needs(declaration.versions)
                switch declaration.kind {
                case "struct", "enum", "class", "actor", "protocol", "typealias":
                    if !declaration.path.contains(".") { types[declaration.path, default: []].append(needs) }
                case "func":
                    functions[Self.functionKey(declaration.path), default: []].append(needs)
                default: break
                }
            }
        }
        return Newer(types: types.compactMapValues(leastNeeds), functions: functions.compactMapValues(leastNeeds))
    }

    /// What a use of the name needs whichever declaration it means: per platform, the least of them; nil when one of
    /// them needs nothing above the floor.
    private func leastNeeds(_ all: [Versions]) -> Versions? {
        var least: Versions = [:]
        for platform in versions.keys {
            let each = all.map { $0[platform] ?? [] }
            if let lowest = each.min(by: Self.isBelow), !lowest.isEmpty { least[platform] = lowest }
        }
        return least.isEmpty ? nil : least
    }

    /// The declared versions above the floor.
    private func needs(_ declared: [String: String]) -> Versions {
        var needs: Versions = [:]
        for (platform, floor) in versions {
            guard let text = declared[platform] else { continue }
            let version = text.split(separator: ".").compactMap { Int($0) }
            if Self.isBelow(floor, version) { needs[platform] = version }
        }
        return needs
    }

    /// `sleep(for:` for `Task.sleep(for:tolerance:)`, `sync()` for `AppStore.sync()`.
    static func functionKey(_ path: String) -> String {
        let open = path.firstIndex(of: "(") ?? path.endIndex
        let name = path[..<open].split(separator: ".").last.map(String.init) ?? ""
        let labels = path[open...].dropFirst().prefix { $0 != ")" }
        guard let first = labels.split(separator: ":").first else { return name + "()" }
        return "\(name)(\(first):"
    }

    /// Each use of a newer name in `source` not covered where it stands: `"12: sleep(for: (iOS 16.0, macOS 13.0)"`.
    func uncovered(in source: String, newer: Newer) -> [String] {
        var found: [String] = []
        var depth = 0
        var scopes: [(depth: Int, versions: Versions)] = []
        var pending: Versions?
        for (number, line) in Self.code(source).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let characters = Array(line)
            if let stated = Self.available(String(line)) { pending = (pending ?? [:]).merging(stated) { $1 } }
            var index = 0
            while index < characters.count {
                let character = characters[index]
                if character == "{" {
                    depth += 1
                    if let opened = pending {
                        scopes.append((depth, opened))
                        pending = nil
                    }
                } else if character == "}" {
                    while let last = scopes.last, last.depth >= depth { scopes.removeLast() }
                    depth -= 1
                } else if character.isLetter || character == "_",
                    index == 0
                        || !(characters[index - 1].isLetter || characters[index - 1].isNumber
                            || characters[index - 1] == "_")
                {
                    let word = String(characters[index...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                    // A declaration's own signature and attributes are within its @available (still pending).
                    let stated = scopes.map(\.versions) + (pending.map { [$0] } ?? [])
                    // `Outer.Name` is a member type, not the top-level `Name` (StoreKit's iOS 18.4 typealias
                    // `SubscriptionInfo` is not `Product.SubscriptionInfo` of iOS 15).
                    let member = index > 0 && characters[index - 1] == "."
                    for (name, needed) in uses(
                        of: word, after: index + word.count, in: characters, newer: newer, member: member)
                    where !covers(stated, needed) && !Self.declares(word, before: index, in: characters) {
                        found.append("\(number + 1): \(name) (\(Self.format(needed)))")
                    }
                    index += word.count
                    continue
                }
                index += 1
            }
            if !Self.isAttributesOnly(String(line)) && !line.contains("{") { pending = nil }
        }
        return found
    }

    /// The newer names a word starting a use is: a type, or a call `word(label:`.
    private func uses(of word: String, after end: Int, in characters: [Character], newer: Newer, member: Bool)
        -> [(String, Versions)]
    {
        var uses: [(String, Versions)] = []
        if !member, let needed = newer.types[word] { uses.append((word, needed)) }
        var index = end
        while index < characters.count, characters[index] == " " { index += 1 }
        guard index < characters.count, characters[index] == "(" else { return uses }
        index += 1
        while index < characters.count, characters[index] == " " { index += 1 }
        let label = String(characters[index...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
        var after = index + label.count
        while after < characters.count, characters[after] == " " { after += 1 }
        let key: String
        if label.isEmpty, after < characters.count, characters[after] == ")" {
            key = word + "()"
        } else if !label.isEmpty, after < characters.count, characters[after] == ":" {
            key = "\(word)(\(label):"
        } else {
            key = "\(word)(_:"
        }
        if let needed = newer.functions[key] { uses.append((key, needed)) }
        return uses
    }

    /// Whether the scopes' availability (the highest each states) covers every platform `needed` names.
    private func covers(_ scopes: [Versions], _ needed: Versions) -> Bool {
        needed.allSatisfy { platform, version in
            scopes.contains { scope in scope[platform].map { !Self.isBelow($0, version) } ?? false }
        }
    }

    /// `func word(`: a declaration of our own, no use.
    private static func declares(_ word: String, before index: Int, in characters: [Character]) -> Bool {
        String(characters[..<index]).trimmingCharacters(in: .whitespaces).hasSuffix("func")
    }

    /// The versions an `@available(…)` or `#available(…)` on the line states.
    static func available(_ line: String) -> Versions? {
        guard let match = line.firstMatch(of: /[@#]available\(([^)]*)\)/) else { return nil }
        var versions: Versions = [:]
        for part in match.1.split(separator: ",") {
            let words = part.split(separator: " ")
            guard words.count == 2 else { continue }
            let version = words[1].split(separator: ".").compactMap { Int($0) }
            if !version.isEmpty { versions[String(words[0])] = version }
        }
        return versions.isEmpty ? nil : versions
    }

    static func isAttributesOnly(_ line: String) -> Bool {
        let rest = line.replacing(/@\w+(\([^)]*\))?/, with: "")
        return rest.allSatisfy(\.isWhitespace) && line.contains("@")
    }

    /// `a` is an earlier version than `b` (`[15]` before `[16, 0]`; `[16]` is `[16, 0]`).
    static func isBelow(_ a: [Int], _ b: [Int]) -> Bool {
        for index in 0..<max(a.count, b.count) {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            if x != y { return x < y }
        }
        return false
    }

    static func format(_ versions: Versions) -> String {
        versions.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.map(String.init).joined(separator: "."))" }
            .joined(separator: ", ")
    }

    /// The source with comments and the insides of string literals blanked (lines kept, so numbers stay right).
    static func code(_ source: String) -> String {
        let text = Array(source)
        var out: [Character] = []
        out.reserveCapacity(text.count)
        func blank(_ character: Character) -> Character { character == "\n" ? "\n" : " " }
        func starts(_ prefix: String, at index: Int) -> Bool {
            index + prefix.count <= text.count && text[index..<index + prefix.count].elementsEqual(prefix)
        }
        var index = 0
        while index < text.count {
            if starts("//", at: index) {
                while index < text.count, text[index] != "\n" {
                    out.append(" ")
                    index += 1
                }
            } else if starts("/*", at: index) {
                while index < text.count, !starts("*/", at: index) {
                    out.append(blank(text[index]))
                    index += 1
                }
                out.append(contentsOf: "  ".prefix(text.count - index))
                index += 2
            } else if text[index] == "\"" {
                let delimiter = starts("\"\"\"", at: index) ? "\"\"\"" : "\""
                out.append(contentsOf: delimiter)
                index += delimiter.count
                while index < text.count, !starts(delimiter, at: index) {
                    if text[index] == "\\", index + 1 < text.count {
                        out.append(" ")
                        index += 1
                    }
                    out.append(blank(text[index]))
                    index += 1
                }
                if index < text.count { out.append(contentsOf: delimiter) }
                index += delimiter.count
            } else {
                out.append(text[index])
                index += 1
            }
        }
        return String(out)
    }
}
