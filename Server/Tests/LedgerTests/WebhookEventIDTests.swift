import Foundation
import Testing

@testable import Ledger

/// Webhook event ids keep their documented shape (`evt_` and 32 hexadecimal digits), never repeat, and lead with
/// their time, so the outbox's index of them grows at its end.
@Suite("Ledger: webhook event ids")
struct WebhookEventIDTests {
    @Test("evt_ and 32 lower-case hex digits, the first 12 the milliseconds since 1970")
    func shape() {
        let id = SQLLedger.eventID(at: 1_795_366_800_123)
        #expect(id.hasPrefix("evt_01a204334afb"))
        #expect(id.count == 36)
        #expect(id.dropFirst(4).allSatisfy { "0123456789abcdef".contains($0) })
    }

    @Test("later events sort after earlier ones; events of one millisecond differ")
    func ordered() {
        var previous = SQLLedger.eventID(at: 1_795_366_800_000)
        for millisecond in Int64(1_795_366_800_001)...1_795_366_800_200 {
            let id = SQLLedger.eventID(at: millisecond)
            #expect(id > previous)
            previous = id
        }
        let same = Set((0..<10_000).map { _ in SQLLedger.eventID(at: 1_795_366_800_000) })
        #expect(same.count == 10_000)
    }

    @Test("instants outside 48 bits are clamped, never trapped on")
    func extremes() {
        #expect(SQLLedger.eventID(at: .min).hasPrefix("evt_000000000000"))
        #expect(SQLLedger.eventID(at: -1).hasPrefix("evt_000000000000"))
        #expect(SQLLedger.eventID(at: .max).hasPrefix("evt_ffffffffffff"))
    }
}
