/// Decimal yuan as Chinese providers write amounts (`"0.01"`, `"6.00"`, `"0.1"`), converted exactly to integer fen.
public enum YuanAmount {
    /// What a text is as an amount.
    public enum Reading: Sendable, Hashable {
        /// Exactly this many fen.
        case fen(Int64)
        /// An amount, but finer than the fen (a decimal past the second that is not zero).
        case finerThanFen
        case notAnAmount
    }

    /// Fen for a string of digits with at most two decimals (a leading `-` when `signed`); nil for anything else
    /// (`+`, exponents, `.5`, `1.234`, more than 13 digits of yuan). With `decimals` above two, that many may be
    /// written as long as those past the second are zeros: WeChat Pay's bills write fees with five (`0.59000`).
    public static func fen(_ text: String, signed: Bool = false, decimals: Int = 2) -> Int64? {
        guard case .fen(let fen) = read(text, signed: signed, decimals: decimals) else { return nil }
        return fen
    }

    /// `text` read as ``fen(_:signed:decimals:)`` reads it, saying why it is not a number of fen.
    public static func read(_ text: String, signed: Bool = false, decimals maxDecimals: Int = 2) -> Reading {
        var digits = Substring(text)
        var negative = false
        if signed, digits.first == "-" {
            negative = true
            digits = digits.dropFirst()
        }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 13,
            whole.allSatisfy({ $0.isASCII && $0.isNumber }),
            let yuan = Int64(whole)
        else { return .notAnAmount }
        var fraction: Int64 = 0
        if parts.count == 2 {
            let decimals = parts[1]
            guard (1...max(2, maxDecimals)).contains(decimals.count),
                decimals.allSatisfy({ $0.isASCII && $0.isNumber })
            else { return .notAnAmount }
            guard decimals.dropFirst(2).allSatisfy({ $0 == "0" }) else { return .finerThanFen }
            let fen = decimals.prefix(2)
            guard let value = Int64(fen) else { return .notAnAmount }
            fraction = value * (fen.count == 1 ? 10 : 1)
        }
        let fen = yuan * 100 + fraction
        return .fen(negative ? -fen : fen)
    }
}
