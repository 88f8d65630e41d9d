/// Decimal yuan as Chinese providers write amounts (`"0.01"`, `"6.00"`, `"0.1"`), converted exactly to integer fen.
public enum YuanAmount {
    /// Fen for a string of digits with at most two decimals (a leading `-` when `signed`); nil for anything else
    /// (`+`, exponents, `.5`, `1.234`, more than 13 digits of yuan).
    public static func fen(_ text: String, signed: Bool = false) -> Int64? {
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
        else { return nil }
        var fraction: Int64 = 0
        if parts.count == 2 {
            let decimals = parts[1]
            guard (1...2).contains(decimals.count), decimals.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int64(decimals)
            else { return nil }
            fraction = value * (decimals.count == 1 ? 10 : 1)
        }
        let fen = yuan * 100 + fraction
        return negative ? -fen : fen
    }
}
