/// What a caller outside is told about a failure: no source paths (some libraries put `file:line` in their error
/// descriptions) and at most 300 characters. The whole error stays in the server's log, under the request id.
///
/// One pass over the text, whatever it holds: a message carries what the caller sent (an unknown product's id, a
/// field's name), and the two regular expressions this replaced backtracked in time quadratic in such text — 16 KB
/// of `/a/a/…` as a product id held a core for 15 s, and every error answer compiled both patterns again (0.3 ms a
/// 404, ten times a healthy request).
public enum PublicMessage {
    public static let maxLength = 300

    public static func clean(_ text: String) -> String {
        let cleaned = String(withoutFieldLabels(withoutSourcePaths(Array(text))))
        guard cleaned.count > maxLength else { return cleaned }
        return String(cleaned.prefix(maxLength - 1)) + "…"
    }

    /// Each source path replaced by `…`. A path is an optional drive (`C:`) and two or more `/segment`s — a segment
    /// is characters other than whitespace, quotes, `/`, `)` and `,` — up to the last `.swift` (after at least one
    /// character) of the last segment that holds one, then `:line` if it follows. Where a run of segments holds no
    /// such path from its first slash, it holds none from a later one either: the run is copied and passed.
    static func withoutSourcePaths(_ text: [Character]) -> [Character] {
        var cleaned: [Character] = []
        cleaned.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            var start = index
            if text[index].isASCII, text[index].isLetter, index + 2 < text.count, text[index + 1] == ":",
                text[index + 2] == "/"
            {
                start = index + 2
            }
            guard text[start] == "/" else {
                cleaned.append(text[index])
                index += 1
                continue
            }
            var segments = 0
            var pathEnd: Int?
            var cursor = start
            while cursor + 1 < text.count, text[cursor] == "/", isPathCharacter(text[cursor + 1]) {
                let segmentStart = cursor + 1
                cursor = segmentStart
                while cursor < text.count, isPathCharacter(text[cursor]) { cursor += 1 }
                segments += 1
                if segments >= 2, let end = endOfLastSwiftSuffix(in: text, after: segmentStart, before: cursor) {
                    pathEnd = end
                }
            }
            guard var end = pathEnd else {
                let next = max(cursor, index + 1)
                cleaned.append(contentsOf: text[index..<next])
                index = next
                continue
            }
            if end + 1 < text.count, text[end] == ":", isDigit(text[end + 1]) {
                end += 1
                while end < text.count, isDigit(text[end]) { end += 1 }
            }
            cleaned.append("…")
            index = end
        }
        return cleaned
    }

    /// Each `file:`, `function:`, `line:` or `column:` field removed with its value (quoted, or digits), a comma
    /// after it and the spaces around.
    static func withoutFieldLabels(_ text: [Character]) -> [Character] {
        // Where the first `"` at or after each position is (the text's end when none): a quoted value in one step.
        var nextQuote = [Int](repeating: text.count, count: text.count + 1)
        for index in text.indices.reversed() {
            nextQuote[index] = text[index] == "\"" ? index : nextQuote[index + 1]
        }
        var cleaned: [Character] = []
        cleaned.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            if let end = endOfField(in: text, at: index, nextQuote: nextQuote) {
                index = end
            } else {
                cleaned.append(text[index])
                index += 1
            }
        }
        return cleaned
    }

    private static let labels: [[Character]] = ["file", "function", "line", "column"].map { Array($0) }

    private static func endOfField(in text: [Character], at start: Int, nextQuote: [Int]) -> Int? {
        guard let label = labels.first(where: { text[start...].starts(with: $0) }) else { return nil }
        var cursor = start + label.count
        guard cursor < text.count, text[cursor] == ":" else { return nil }
        cursor += 1
        while cursor < text.count, text[cursor] == " " { cursor += 1 }
        guard cursor < text.count else { return nil }
        if text[cursor] == "\"" {
            let close = nextQuote[cursor + 1]
            guard close < text.count else { return nil }
            cursor = close + 1
        } else {
            guard isDigit(text[cursor]) else { return nil }
            while cursor < text.count, isDigit(text[cursor]) { cursor += 1 }
        }
        if cursor < text.count, text[cursor] == "," { cursor += 1 }
        while cursor < text.count, text[cursor] == " " { cursor += 1 }
        return cursor
    }

    /// Where the last `.swift` in `text[after..<before]` that has a character before it ends.
    private static func endOfLastSwiftSuffix(in text: [Character], after start: Int, before end: Int) -> Int? {
        var position = end - swiftSuffix.count
        while position > start {
            if text[position..<position + swiftSuffix.count].elementsEqual(swiftSuffix) {
                return position + swiftSuffix.count
            }
            position -= 1
        }
        return nil
    }

    private static let swiftSuffix: [Character] = Array(".swift")

    private static func isPathCharacter(_ character: Character) -> Bool {
        !character.isWhitespace && !#"/"'),"#.contains(character)
    }

    private static func isDigit(_ character: Character) -> Bool {
        character.isASCII && character.isWholeNumber
    }
}
