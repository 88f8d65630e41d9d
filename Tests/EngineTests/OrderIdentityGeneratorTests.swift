import Engine
import Foundation
import LedgerTestSupport
import OrderSafeModel
import Synchronization
import Testing

struct FixedClock: WallClock {
    var date: Date
    func now() -> Date { date }
}

@Suite("Order numbers")
struct OrderIdentityGeneratorTests {
    // 2026-11-22 17:00 UTC is already 23 November in Beijing.
    let clock = FixedClock(date: Date(timeIntervalSince1970: 1_795_366_800))

    @Test("numbers carry the Beijing date and fit WeChat Pay's out_trade_no rules")
    func format() throws {
        let generator = OrderIdentityGenerator(clock: clock, random: { 0 })
        let identity = generator.next()
        #expect(identity.orderNo == "OS20261123-0000000000")
        #expect((6...32).contains(identity.orderNo.count))
        #expect(identity.orderUUID.uuidString.lowercased() == "00000000-0000-4000-8000-000000000000")
    }

    @Test("the random part uses Crockford base32 and UUIDs are version 4")
    func randomPart() {
        let values = Mutex(SeededRandom(state: 42))
        let generator = OrderIdentityGenerator(clock: clock, random: { values.withLock { $0.next() } })
        var seen = Set<String>()
        for _ in 0..<1000 {
            let identity = generator.next()
            let suffix = identity.orderNo.split(separator: "-")[1]
            #expect(suffix.count == 10)
            #expect(suffix.allSatisfy { "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains($0) })
            #expect(identity.orderUUID.uuidString.dropFirst(14).first == "4")
            seen.insert(identity.orderNo)
        }
        #expect(seen.count == 1000)
    }
}
