import Foundation
import Ledger
import LedgerTestSupport
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit
import Testing

@Suite("Ledger inbox: verdicts, bounded refusals, the sweep's choice")
struct InboxTests {
    static func signal(_ body: String, kind: InboxKind = .notify, at date: Date = Fixtures.now) -> InboundSignal {
        InboundSignal(
            channel: .wechatPay, kind: kind, headers: ["wechatpay-serial": "S"], body: Array(body.utf8),
            receivedAt: date)
    }

    static func body(_ database: LedgerDatabase, _ id: Int64) async throws -> Data {
        try await database.withSession { db in
            try await db.raw("SELECT body FROM inbox_bodies WHERE id = \(bind: id)").first()!.decode(
                column: "body", as: Data.self)
        }
    }

    @Test(
        "a refused entry is closed and truncated, never swept, and a resend of it is not taken for one already applied",
        arguments: TestEngine.available)
    func refused(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let junk = Self.signal(String(repeating: "x", count: 200_000), at: Fixtures.now.addingTimeInterval(-3600))
            let entry = try await ledger.storeInbound(junk)
            try await ledger.finishInbound(id: entry.id, verdict: .refused, note: "bad signature", at: Fixtures.now)
            #expect(try await Self.body(database, entry.id).count == SQLLedger.refusedBodyBytes)
            let again = try await ledger.storeInbound(junk)
            #expect(again.id == entry.id && !again.processed)  // processed again, as the engine does at once
            try await ledger.finishInbound(id: again.id, verdict: .refused, note: "bad signature", at: Fixtures.now)
            #expect(try await Self.body(database, entry.id).count == SQLLedger.refusedBodyBytes)

            let waiting = try await ledger.storeInbound(
                Self.signal("waits", at: Fixtures.now.addingTimeInterval(-3600)))
            try await ledger.finishInbound(id: waiting.id, verdict: .waiting, note: "no payment yet", at: Fixtures.now)
            let failed = try await ledger.storeInbound(
                Self.signal("failed", at: Fixtures.now.addingTimeInterval(-3600)))
            try await ledger.finishInbound(id: failed.id, verdict: .failed, note: "database down", at: Fixtures.now)
            let applied = try await ledger.storeInbound(
                Self.signal("applied", at: Fixtures.now.addingTimeInterval(-3600)))
            try await ledger.finishInbound(id: applied.id, verdict: .applied, note: nil, at: Fixtures.now)
            #expect(try await ledger.storeInbound(Self.signal("applied")).processed)

            let swept = try await ledger.pendingSignals(
                channels: [.wechatPay], before: Fixtures.now, maxAttempts: 10, limit: 100)
            #expect(Set(swept.map(\.id)) == [waiting.id, failed.id])
        }
    }

    @Test(
        "a signal with a refused entry's body takes the entry over, whole and with its own headers; applied, it is never purged",
        arguments: TestEngine.available)
    func refusedGivesWay(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let body = String(repeating: "g", count: 4000)
            var probe = Self.signal(body, at: Fixtures.now.addingTimeInterval(-8 * 86400))
            probe.headers = ["Wechatpay-Signature": "WECHATPAY/SIGNTEST/abc"]
            let refused = try await ledger.storeInbound(probe)
            try await ledger.finishInbound(id: refused.id, verdict: .refused, note: "probe", at: Fixtures.now)
            #expect(try await Self.body(database, refused.id).count == SQLLedger.refusedBodyBytes)

            var genuine = Self.signal(body, at: Fixtures.now.addingTimeInterval(-8 * 86400))
            genuine.headers = ["Wechatpay-Signature": "genuine"]
            let taken = try await ledger.storeInbound(genuine)
            #expect(taken.id == refused.id && !taken.processed)
            #expect(try await Self.body(database, taken.id) == Data(body.utf8))
            try await ledger.finishInbound(id: taken.id, verdict: .applied, note: nil, at: Fixtures.now)
            #expect(try await ledger.storeInbound(genuine).processed)
            #expect(try await ledger.purgeRefusedInbound(before: Fixtures.now, keeping: 0) == 0)
            // Inside a write (an app's submission stored as applied), the same.
            var again = Self.signal("h" + body, at: Fixtures.now)
            let second = try await ledger.storeInbound(again)
            try await ledger.finishInbound(id: second.id, verdict: .refused, note: "junk", at: Fixtures.now)
            again.headers = ["Wechatpay-Signature": "genuine"]
            let genuineAgain = again
            let inWrite = try await ledger.atomically { ledger in
                try await ledger.storeInbound(genuineAgain, appliedAt: Fixtures.now)
            }
            #expect(inWrite.id == second.id && !inWrite.processed)
            #expect(try await Self.body(database, second.id).count == body.utf8.count + 1)
        }
    }

    @Test(
        "refused entries go after their retention and beyond a count; nothing else is purged",
        arguments: TestEngine.available)
    func purge(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            var refused: [Int64] = []
            for index in 0..<5 {
                let entry = try await ledger.storeInbound(
                    Self.signal("junk \(index)", at: Fixtures.now.addingTimeInterval(Double(index) * 86400)))
                try await ledger.finishInbound(id: entry.id, verdict: .refused, note: "bad signature", at: Fixtures.now)
                refused.append(entry.id)
            }
            let kept = try await ledger.storeInbound(Self.signal("genuine, waiting"))
            try await ledger.finishInbound(id: kept.id, verdict: .waiting, note: "no payment yet", at: Fixtures.now)
            // Two are older than the cut-off; of the three left only the newest two are kept.
            #expect(
                try await ledger.purgeRefusedInbound(before: Fixtures.now.addingTimeInterval(1.5 * 86400), keeping: 2)
                    == 3)
            let left = try await database.withSession { db in
                try await db.raw("SELECT id FROM inbox ORDER BY id").all().map {
                    try $0.decode(column: "id", as: Int64.self)
                }
            }
            #expect(left == [refused[3], refused[4], kept.id])
        }
    }

    @Test(
        "two users submitting the same transaction get an entry each; the same user's resend shares one",
        arguments: TestEngine.available)
    func submissionsPerUser(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            func submission(_ user: String) -> InboundSignal {
                InboundSignal(
                    channel: .appStore, kind: .submission, headers: ["user_id": user],
                    body: Array(#"{"signed_transaction":"x.y.z"}"#.utf8), receivedAt: Fixtures.now)
            }
            let alice = try await ledger.storeInbound(submission("alice"))
            let bob = try await ledger.storeInbound(submission("bob"))
            let aliceAgain = try await ledger.storeInbound(submission("alice"))
            #expect(alice.id != bob.id && aliceAgain.id == alice.id)
        }
    }

    @Test(
        "an entry stored as applied inside a write commits applied with it, or not at all; one stored before is returned to finish",
        arguments: TestEngine.available)
    func storedApplied(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            struct Abandoned: Error {}
            let signal = Self.signal("{\"submission\":1}", kind: .submission)
            await #expect(throws: Abandoned.self) {
                try await ledger.atomically { ledger in
                    _ = try await ledger.storeInbound(signal, appliedAt: Fixtures.now)
                    throw Abandoned()
                }
            }
            let stored = try await database.withSession { db in
                try await db.raw("SELECT COUNT(*) AS n FROM inbox").first()
            }
            #expect(try stored?.decode(column: "n", as: Int.self) == 0)

            let entry = try await ledger.atomically { ledger in
                try await ledger.storeInbound(signal, appliedAt: Fixtures.now)
            }
            #expect(entry.isNew && entry.processed)
            let found = try await ledger.storeInbound(signal)
            #expect(found.id == entry.id && !found.isNew && found.processed)
            let row = try await database.withSession { db in
                try await db.raw("SELECT verdict, attempts, processed_at FROM inbox WHERE id = \(bind: entry.id)")
                    .first()
            }
            #expect(try row?.decode(column: "verdict", as: String.self) == InboxVerdict.applied.rawValue)
            #expect(try row?.decode(column: "attempts", as: Int.self) == 1)
            #expect(try row?.decode(column: "processed_at", as: Int64.self) == Fixtures.now.millisecondsSince1970)

            // Stored before (a failed attempt): returned as it is, unprocessed, for the caller to finish.
            let failedBefore = Self.signal("{\"submission\":2}", kind: .submission)
            let first = try await ledger.storeInbound(failedBefore)
            try await ledger.finishInbound(id: first.id, verdict: .failed, note: "database down", at: Fixtures.now)
            let again = try await ledger.atomically { ledger in
                try await ledger.storeInbound(failedBefore, appliedAt: Fixtures.now)
            }
            #expect(again.id == first.id && !again.isNew && !again.processed)
        }
    }

}

@Suite("Ledger: subscription chains and the signals waiting for their owner")
struct ChainLedgerTests {
    @Test(
        "a chain's owner is the owner of any of its recorded transactions; waiting signals come back in the provider's order",
        arguments: TestEngine.available)
    func chains(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let unknown = try await ledger.payment(channel: .appStore, providerTransactionID: "r3", chainOf: "o1")
            #expect(unknown.payment == nil && unknown.chainOwner == nil)
            let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            var renewal = Fixtures.payment(order, txn: "r3")
            renewal.originalTransactionID = "o1"
            _ = try await ledger.fulfil(renewal, at: Fixtures.now)
            // Asked with the payment, or with another transaction of the chain, or with none.
            let known = try await ledger.payment(channel: .appStore, providerTransactionID: "r3", chainOf: "o1")
            #expect(known.payment == (try await ledger.payment(channel: .appStore, providerTransactionID: "r3")))
            #expect(known.payment?.orderNo == order.orderNo && known.chainOwner == order.userID)
            let next = try await ledger.payment(channel: .appStore, providerTransactionID: "r4", chainOf: "o1")
            #expect(next.payment == nil && next.chainOwner == order.userID)
            let unasked = try await ledger.payment(channel: .appStore, providerTransactionID: "r3", chainOf: nil)
            #expect(unasked.payment?.orderNo == order.orderNo && unasked.chainOwner == nil)
            #expect(
                try await ledger.payment(channel: .alipay, providerTransactionID: "r4", chainOf: "o1").chainOwner == nil
            )

            var ids: [Int64] = []
            for (body, signedAt) in [("late", 300), ("early", 100), ("middle", 200)] {
                let entry = try await ledger.storeInbound(InboxTests.signal(body))
                try await ledger.finishInbound(id: entry.id, verdict: .waiting, note: "unbound", at: Fixtures.now)
                try await ledger.awaitChain(inboxID: entry.id, chain: "o2", signedAt: Int64(signedAt))
                ids.append(entry.id)
            }
            #expect(try await ledger.signalsAwaiting(chain: "o2").map(\.id) == [ids[1], ids[2], ids[0]])
            let awaited = { (chain: String?) in
                try await ledger.payment(channel: .appStore, providerTransactionID: "r5", chainOf: chain)
                    .signalsAwaitChain
            }
            #expect(try await awaited("o2"))
            #expect(try await !awaited("o1"))
            #expect(try await !awaited(nil))
            try await ledger.finishInbound(id: ids[1], verdict: .applied, note: nil, at: Fixtures.now)
            #expect(try await ledger.signalsAwaiting(chain: "o2").map(\.id) == [ids[2], ids[0]])
            for id in [ids[2], ids[0]] {
                try await ledger.finishInbound(id: id, verdict: .applied, note: nil, at: Fixtures.now)
            }
            #expect(try await !awaited("o2"))
        }
    }

    @Test(
        "the lookup made with an inbox entry's insert finds what the lookup alone finds; a resend gets the entry stored before",
        arguments: TestEngine.available)
    func lookupWithEntry(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            var renewal = Fixtures.payment(order, txn: "r3")
            renewal.originalTransactionID = "o1"
            _ = try await ledger.fulfil(renewal, at: Fixtures.now)
            let waiting = try await ledger.storeInbound(InboxTests.signal("waits"))
            try await ledger.finishInbound(id: waiting.id, verdict: .waiting, note: "unbound", at: Fixtures.now)
            try await ledger.awaitChain(inboxID: waiting.id, chain: "o2", signedAt: 1)
            let queries =
                [("r3", "o1"), ("r4", "o1"), ("r3", nil), ("r5", "o2"), ("r5", nil)].map {
                    PaymentQuery(channel: .appStore, providerTransactionID: $0, chainOf: $1)
                } + [
                    PaymentQuery(channel: .alipay, providerTransactionID: "r3", chainOf: "o1"),
                    PaymentQuery(
                        channel: .appStore, providerTransactionID: "r6", chainOf: "o1", order: .uuid(order.orderUUID)),
                    PaymentQuery(
                        channel: .appStore, providerTransactionID: "r3", chainOf: nil, order: .uuid(order.orderUUID)),
                    PaymentQuery(channel: .appStore, providerTransactionID: "r7", chainOf: nil, order: .uuid(UUID())),
                    PaymentQuery(
                        channel: .appStore, providerTransactionID: "r8", chainOf: "o1", order: .number(order.orderNo)),
                    PaymentQuery(channel: .appStore, providerTransactionID: "r8", chainOf: nil, order: .number("none")),
                ]
            for (index, query) in queries.enumerated() {
                let signal = InboxTests.signal("submission \(index)", kind: .submission)
                let alone = try await ledger.payment(query)
                let naming = [.uuid(order.orderUUID), .number(order.orderNo)].contains(query.order)
                #expect((alone.namedOrder?.orderNo == order.orderNo) == naming && (alone.namedOrder == nil) == !naming)
                let first = try await ledger.atomically { ledger in
                    try await ledger.storeInbound(signal, appliedAt: Fixtures.now, lookingUp: query)
                }
                #expect(first.lookup == alone, "\(query)")
                #expect(first.entry.isNew && first.entry.processed)
                let again = try await ledger.atomically { ledger in
                    try await ledger.storeInbound(signal, appliedAt: Fixtures.now, lookingUp: query)
                }
                #expect(
                    again.lookup == alone && again.entry.id == first.entry.id && !again.entry.isNew
                        && again.entry.processed)
            }
            #expect(
                try await ledger.payment(channel: .appStore, providerTransactionID: "r3", chainOf: "o1").payment?
                    .orderNo == order.orderNo)
        }
    }
}
