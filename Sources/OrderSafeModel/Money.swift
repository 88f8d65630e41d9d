/// An amount of money: integer minor units (fen, cents) and an ISO 4217 currency.
///
/// Never a floating-point number: `amountMinor` 600 with `CNY` is ¥6.00.
public struct Money: Codable, Hashable, Sendable, CustomStringConvertible {
    public var amountMinor: Int64
    public var currency: CurrencyCode

    public init(amountMinor: Int64, currency: CurrencyCode) {
        self.amountMinor = amountMinor
        self.currency = currency
    }

    enum CodingKeys: String, CodingKey {
        case amountMinor = "amount_minor"
        case currency
    }

    /// The amount as a plain decimal string in major units, e.g. `"6.00"`, `"0.10"`, `"-1.50"`, `"500"` (JPY).
    public var decimalString: String {
        let digits = currency.minorUnitDigits
        let sign = amountMinor < 0 ? "-" : ""
        let magnitude = amountMinor.magnitude
        guard digits > 0 else { return sign + String(magnitude) }
        var scale: UInt64 = 1
        for _ in 0..<digits { scale *= 10 }
        let fraction = String(magnitude % scale)
        let padded = String(repeating: "0", count: digits - fraction.count) + fraction
        return "\(sign)\(magnitude / scale).\(padded)"
    }

    public var description: String { "\(decimalString) \(currency.code)" }
}
