import Foundation
import Ledger
import LedgerTestSupport
@_spi(OrderSafeServer) import OrderSafeModel
import Testing

/// Webhook payloads are written without `JSONEncoder`, and must be the very bytes it writes with the API's settings:
/// merchants verify signatures over them and parse them with whatever JSON library they use.
@Suite("Ledger: webhook payloads")
struct WebhookPayloadTests {
    /// What `JSONEncoder` is given: the documented shape of a webhook event.
    struct Oracle: Codable, Equatable {
        struct Data: Codable, Equatable {
            var order: Order
            var cause: String
            var evidence: String?
        }

        var id: String
        var type: String
        var createdAt: Date
        var data: Data

        enum CodingKeys: String, CodingKey {
            case id, type, data
            case createdAt = "created_at"
        }
    }

    /// Every ASCII character (controls, quotes, backslash, slash, DEL), line and paragraph separators, a BOM, CJK and
    /// an emoji.
    static let alphabet: [String] =
        (0..<0x80).map { String(Unicode.Scalar(UInt8($0))) } + [
            "\u{2028}", "\u{2029}", "\u{FEFF}", "订", "单", "✓", "👍🏽", "é",
        ]

    static func text(_ random: inout some RandomNumberGenerator) -> String {
        (0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
    }

    static func date(_ random: inout some RandomNumberGenerator) -> Date {
        // Milliseconds, as the ledger keeps them: 1970 to 9999, and a few before 1970.
        Date(millisecondsSince1970: Int64.random(in: -86_400_000 * 400...253_402_300_799_999, using: &random))
    }

    @Test("2,000 random events are byte for byte what JSONEncoder writes, with every character JSON must escape")
    func matchesJSONEncoder() throws {
        var random = SeededRandom(state: 20_261_124)
        let encoder = OrderSafeJSON.encoder()
        for _ in 0..<2_000 {
            let order = Order(
                orderNo: Self.text(&random), orderUUID: UUID(), userID: Self.text(&random),
                productID: Self.text(&random),
                channel: Channel.builtIn.randomElement(using: &random)!,
                status: OrderStatus.allCases.randomElement(using: &random)!,
                amount: Money(amountMinor: Int64.random(in: .min ... .max, using: &random), currency: .cny),
                createdAt: Self.date(&random), updatedAt: Self.date(&random), sandbox: Bool.random(using: &random))
            let oracle = Oracle(
                id: Self.text(&random), type: Self.text(&random), createdAt: Self.date(&random),
                data: .init(
                    order: order, cause: Self.text(&random),
                    evidence: Bool.random(using: &random) ? Self.text(&random) : nil))
            let written = WebhookPayload.json(
                id: oracle.id, type: oracle.type, createdAt: oracle.createdAt, order: order, cause: oracle.data.cause,
                evidence: oracle.data.evidence)
            let expected = String(decoding: try encoder.encode(oracle), as: UTF8.self)
            #expect(written == expected)
            if written != expected { return }
        }
    }
}
