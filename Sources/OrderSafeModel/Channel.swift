/// A payment channel: how the user pays for an order.
///
/// An open set, like the kinds the ledger stores: the three below are the channels this release builds in, and a
/// server may register another (its channel registry). A name is 1–32 lowercase ASCII letters and digits; whether a
/// server takes payments through one is the server's answer (a product not sold through it, a channel not
/// registered), not the parser's.
public struct Channel: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// Nil when `rawValue` is not a channel name (empty, longer than 32, or not lowercase letters and digits).
    public init?(rawValue: String) {
        let bytes = rawValue.utf8
        guard (1...Self.maxNameLength).contains(bytes.count),
            bytes.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (48...57).contains($0) }),
            bytes.first.map({ $0 >= UInt8(ascii: "a") }) == true
        else { return nil }
        self.rawValue = rawValue
    }

    private init(builtIn name: String) { rawValue = name }

    /// Apple in-app purchase (StoreKit).
    public static let appStore = Channel(builtIn: "appstore")
    public static let alipay = Channel(builtIn: "alipay")
    public static let wechatPay = Channel(builtIn: "wechatpay")

    /// The channels this release builds in, in the order the wire format lists them.
    public static let builtIn: [Channel] = [.appStore, .alipay, .wechatPay]

    /// The longest channel name.
    public static let maxNameLength = 32

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let channel = Channel(rawValue: name) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription:
                    "'\(name.prefix(Self.maxNameLength))' is not a channel name (1–\(Self.maxNameLength) lowercase letters and digits, such as "
                    + Self.builtIn.map(\.rawValue).joined(separator: ", ") + ")")
        }
        self = channel
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}
