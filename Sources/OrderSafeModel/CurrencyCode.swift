/// An ISO 4217 alphabetic currency code (three uppercase ASCII letters), validated on creation and decoding.
public struct CurrencyCode: Codable, Hashable, Sendable, CustomStringConvertible {
    public let code: String

    /// Fails unless `code` is exactly three uppercase ASCII letters.
    public init?(_ code: String) {
        guard code.utf8.count == 3, code.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) })
        else {
            return nil
        }
        self.code = code
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let value = CurrencyCode(raw) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(raw)' is not an ISO 4217 currency code (three uppercase letters)")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(code)
    }

    public var description: String { code }

    /// Digits after the decimal point in the currency's major unit (ISO 4217 "minor unit").
    public var minorUnitDigits: Int {
        switch code {
        case "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF",
            "XOF", "XPF":
            0
        case "BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND":
            3
        default:
            2
        }
    }

    public static let cny = CurrencyCode("CNY")!
    public static let usd = CurrencyCode("USD")!
}
