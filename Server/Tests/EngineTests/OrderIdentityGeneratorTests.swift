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

    @Test("numbers carry the Beijing date, then its millisecond, and fit WeChat Pay's out_trade_no rules")
    func format() throws {
        let generator = OrderIdentityGenerator(clock: clock, random: { 0 })
        let identity = generator.next()
        // 01:00 in Beijing: 3,600,000 ms into the day, 03DVM0 in Crockford base32; then four random letters.
        #expect(identity.orderNo == "OS20261123-03DVM00000")
        #expect((6...32).contains(identity.orderNo.count))
        // Version 7: the instant's milliseconds (0x01a204334a80), then the random bits.
        #expect(identity.orderUUID.uuidString.lowercased() == "01a20433-4a80-7000-8000-000000000000")
    }

    @Test("what a provider may be asked about: only numbers of the generator's shape")
    func orderNumberShape() {
        let values = Mutex(SeededRandom(state: 7))
        let generator = OrderIdentityGenerator(clock: clock, random: { values.withLock { $0.next() } })
        for _ in 0..<100 { #expect(OrderIdentityGenerator.isOrderNumber(generator.next().orderNo)) }
        for text in [
            "", "OS20261123-000000000", "OS20261123-00000000000", "OS2026112a-0000000000", "OS20261123_0000000000",
            "os20261123-0000000000", "OS20261123-000000000U", "OS20261123-000000000é", "../etc/passwd",
        ] {
            #expect(!OrderIdentityGenerator.isOrderNumber(text), "\(text)")
        }
    }

    @Test("the number's last four letters are random Crockford base32, and UUIDs are version 7")
    func randomPart() {
        let values = Mutex(SeededRandom(state: 42))
        let generator = OrderIdentityGenerator(clock: clock, random: { values.withLock { $0.next() } })
        var seen = Set<String>()
        for _ in 0..<1000 {
            let identity = generator.next()
            let suffix = identity.orderNo.split(separator: "-")[1]
            #expect(suffix.count == 10 && suffix.hasPrefix("03DVM0"))
            #expect(suffix.allSatisfy { "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains($0) })
            #expect(identity.orderUUID.uuidString.dropFirst(14).first == "7")
            #expect("89AB".contains(identity.orderUUID.uuidString.dropFirst(19).first ?? " "))
            seen.insert(identity.orderNo)
        }
        #expect(seen.count == 1000)
    }

    @Test("numbers and UUIDs made later sort after earlier ones, as text (the ledger's indexes grow at their end)")
    func timeOrdered() {
        // 23:59:59.000 in Beijing: the last second of a day, then into the next one.
        let clock = ManualClock(Date(timeIntervalSince1970: 1_795_449_599))
        let values = Mutex(SeededRandom(state: 3))
        let generator = OrderIdentityGenerator(clock: clock, random: { values.withLock { $0.next() } })
        var previous = generator.next()
        for step in 0..<2_000 {
            clock.advance(by: 0.001)
            let identity = generator.next()
            #expect(identity.orderUUID.uuidString > previous.orderUUID.uuidString)
            #expect(identity.orderNo > previous.orderNo, "\(step): \(previous.orderNo) then \(identity.orderNo)")
            previous = identity
        }
        #expect(previous.orderNo.hasPrefix("OS20261124-00"), "the next day starts its numbers again at 0 ms")
    }

    @Test("the Beijing date matches Calendar's across month, year and leap-day boundaries, and never traps")
    func dates() throws {
        var beijing = Calendar(identifier: .gregorian)
        beijing.timeZone = try #require(TimeZone(secondsFromGMT: 8 * 3600))
        let instants: [TimeInterval] =
            [
                0, 1_709_136_000 - 1, 1_709_136_000, 1_709_222_400 - 28_800, 951_782_400, 951_868_800 - 28_800 - 1,
                4_107_542_400 - 28_800, 1_795_366_800, 253_402_300_799 - 28_800,
            ] + stride(from: 0.0, to: 4_000_000_000, by: 9_876_543).map { $0 }
        for instant in instants {
            let date = Date(timeIntervalSince1970: instant)
            let day = beijing.dateComponents([.year, .month, .day], from: date)
            let expected = String(format: "OS%04d%02d%02d-", day.year ?? 0, day.month ?? 0, day.day ?? 0)
            let number = OrderIdentityGenerator(clock: FixedClock(date: date), random: { 0 }).next().orderNo
            #expect(number.hasPrefix(expected), "\(instant): \(number)")
        }
        for extreme in [
            Date.distantPast, Date.distantFuture, Date(timeIntervalSince1970: -1e12), Date(timeIntervalSince1970: 1e15),
        ] {
            #expect(OrderIdentityGenerator(clock: FixedClock(date: extreme), random: { 0 }).next().orderNo.count == 21)
        }
    }
}

@Suite("App Store tokens that say whose order they were (recovery.key)")
struct AccountTokenTagTests {
    let clock = FixedClock(date: Date(timeIntervalSince1970: 1_795_366_800))
    let tags = AccountTokenTag(key: Array(repeating: 7, count: 32))!

    @Test("a tagged token names its user under its key only; version 8 with OrderSafe's mark, time first")
    func namesItsUser() {
        let generator = OrderIdentityGenerator(clock: clock, random: { 0 }, accountTags: tags)
        let token = generator.next(for: "alice").orderUUID
        let text = token.uuidString.lowercased()
        #expect(text.hasPrefix("01a20433-4a80-8a05-8000-"), "the instant, version 8 and the mark, the variant")
        #expect(AccountTokenTag.isTagged(token))
        #expect(tags.names("alice", in: token))
        #expect(!tags.names("bob", in: token) && !tags.names("alice ", in: token))
        let otherKey = AccountTokenTag(key: Array(repeating: 8, count: 32))!
        #expect(!otherKey.names("alice", in: token), "another server's key names nobody")
        // Version 7 tokens (no key, or before one was set) are not tagged: they name nobody.
        let untagged = OrderIdentityGenerator(clock: clock, random: { 0 }).next(for: "alice").orderUUID
        #expect(!AccountTokenTag.isTagged(untagged) && !tags.names("alice", in: untagged))
        #expect(AccountTokenTag(key: Array(repeating: 7, count: 31)) == nil, "a short key is refused")
    }

    @Test("the tag is the first 48 bits of HMAC-SHA256(key, user id), whatever was tagged before with the same key")
    func tagIsTheHMAC() {
        // Expected values from Python's hmac module: hmac.new(bytes([7] * 32), user.encode(), hashlib.sha256).
        let expected = ["alice": "6a8851c590dd", "bob": "f92b65beffd1", "订单": "3b04468a3bb1"]
        let generator = OrderIdentityGenerator(clock: clock, random: { 0 }, accountTags: tags)
        for user in ["alice", "bob", "订单", "alice", "订单", "bob"] {
            let token = generator.next(for: user).orderUUID.uuidString.lowercased()
            #expect(String(token.suffix(12)) == expected[user], "\(user)")
        }
    }

    @Test("one user's tokens differ in their random bits and still sort by time")
    func distinctAndOrdered() {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_795_366_800))
        let values = Mutex(SeededRandom(state: 7))
        let generator = OrderIdentityGenerator(
            clock: clock, random: { values.withLock { $0.next() } }, accountTags: tags)
        var previous = generator.next(for: "alice").orderUUID.uuidString
        var seen: Set<String> = [previous]
        for _ in 0..<1000 {
            clock.advance(by: 0.001)
            let token = generator.next(for: "alice").orderUUID
            #expect(token.uuidString > previous && tags.names("alice", in: token))
            previous = token.uuidString
            seen.insert(previous)
        }
        #expect(seen.count == 1001)
    }
}
