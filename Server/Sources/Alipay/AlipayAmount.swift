import ChannelSupport
import OrderSafeModel

/// Alipay's amounts: decimal yuan strings (`"0.01"`, `"6.00"`, `"0.1"`) converted exactly to integer fen.
public enum AlipayAmount {
    /// Fen for a string of digits with at most two decimals; nil for anything else (signs, exponents, `.5`, `1.234`).
    public static func fen(_ text: String) -> Int64? {
        YuanAmount.fen(text)
    }

    /// The decimal string Alipay expects for an amount in CNY (`600` fen → `"6.00"`).
    public static func string(_ money: Money) throws(AlipayAmountError) -> String {
        guard money.currency == .cny else { throw .unsupportedCurrency(money.currency) }
        guard money.amountMinor > 0, money.amountMinor <= 10_000_000_000 else { throw .outOfRange(money.amountMinor) }
        return money.decimalString
    }
}

/// An amount Alipay cannot take.
public enum AlipayAmountError: Error, Equatable, CustomStringConvertible {
    case unsupportedCurrency(CurrencyCode)
    case outOfRange(Int64)

    public var description: String {
        switch self {
        case .unsupportedCurrency(let currency): "Alipay app payments are in CNY, not \(currency)"
        case .outOfRange(let fen): "\(fen) fen is outside Alipay's range (0.01 to 100000000.00 yuan)"
        }
    }
}
