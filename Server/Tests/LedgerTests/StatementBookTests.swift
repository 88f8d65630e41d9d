import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

@Suite("Statement book: a day's payments a page at a time, its reversals, one transaction per user")
struct StatementBookTests {
    @Test(
        "pages cover the day's payments of the channel exactly once, in order, however many share a millisecond",
        arguments: TestEngine.available)
    func pages(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            // Seven payments in the same millisecond, two a second later, one of another channel, one the day after.
            var recorded: [(String, Channel, Date)] = (1...7).map { ("t\($0)", .appStore, Fixtures.now) }
            recorded += [("t8", .appStore, Fixtures.now + 1), ("t9", .appStore, Fixtures.now + 1)]
            recorded += [("w1", .wechatPay, Fixtures.now), ("late", .appStore, Fixtures.now + 86400)]
            for (index, (txn, channel, at)) in recorded.enumerated() {
                let order = try await ledger.createOrder(
                    Fixtures.newOrder(
                        version, user: "user-\(index % 2)", product: channel == .appStore ? "coins_60" : "box",
                        channel: channel),
                    identity: Fixtures.randomIdentity
                ).order
                _ = try await ledger.fulfil(Fixtures.payment(order, txn: txn), at: at)
            }
            let (from, before) = (Fixtures.now - 60, Fixtures.now + 3600)
            var seen: [String] = []
            var cursor: PaymentCursor?
            var pages = 0
            repeat {
                let page = try await ledger.payments(
                    channel: .appStore, recordedFrom: from, before: before, after: cursor, limit: 3)
                seen += page.payments.map(\.providerTransactionID)
                cursor = page.next
                pages += 1
            } while cursor != nil && pages < 10
            // Three full pages, then an empty one: a full page cannot know it was the last.
            #expect(seen == (1...9).map { "t\($0)" } && pages == 4)
            #expect(try await ledger.paymentCount(channel: .appStore, recordedFrom: from, before: before) == 9)
            let last = try await ledger.payments(
                channel: .appStore, recordedFrom: from, before: before, after: nil, limit: 9)
            #expect(last.payments.count == 9 && last.next != nil)

            _ = try await ledger.reverse(
                Reversal(
                    channel: .appStore, providerTransactionID: "t8", kind: .refunded, cause: .notification,
                    evidence: "inbox:2"),
                at: Fixtures.now + 7200)
            #expect(
                try await ledger.payments(channel: .appStore, reversedFrom: from, before: before).isEmpty)
            #expect(
                try await ledger.payments(
                    channel: .appStore, reversedFrom: Fixtures.now + 7200, before: Fixtures.now + 7201
                ).map(\.providerTransactionID) == ["t8"])
            // Active the day after: user-0 alone (its payment recorded then); its latest is that day's. Active this
            // hour: both (their orders and payments); user-1's latest is t8 (its wechatpay payment is another channel's).
            #expect(
                try await ledger.latestTransactionOfActiveUsers(
                    channel: .appStore, from: Fixtures.now + 86400, before: Fixtures.now + 86401) == ["late"])
            #expect(
                try await ledger.latestTransactionOfActiveUsers(channel: .appStore, from: from, before: before).sorted()
                    == ["late", "t8"])
            #expect(
                try await ledger.latestTransactionOfActiveUsers(
                    channel: .appStore, from: Fixtures.now + 2 * 86400, before: Fixtures.now + 3 * 86400
                ).isEmpty,
                "nobody was active two days later")
        }
    }
}
