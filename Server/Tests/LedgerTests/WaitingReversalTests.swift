import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

/// A refund (or revocation, or its reversal) may reach the server before the payment it is about: the app crashed
/// before submitting, a notification overtook another. Whatever the order, the ledger ends the same.
@Suite("Ledger: reversals that arrive before their payment win at once")
struct WaitingReversalTests {
    static func refund(_ txn: String) -> Reversal {
        Reversal(
            channel: .appStore, providerTransactionID: txn, kind: .refunded, cause: .notification, evidence: "inbox:7")
    }

    enum Signal: CaseIterable {
        case payment, refund, refundReversed
    }

    /// Applies `signals` in order to one new coins order (txn `t1`); returns the order's final status and the balance.
    static func run(_ signals: [Signal], on ledger: SQLLedger) async throws -> (OrderStatus, Int64) {
        let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
        let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity).order
        for signal in signals {
            switch signal {
            case .payment: _ = try await ledger.fulfil(Fixtures.payment(order, txn: "t1"), at: Fixtures.now)
            case .refund: _ = try await ledger.reverse(Self.refund("t1"), at: Fixtures.now)
            case .refundReversed:
                _ = try await ledger.reinstate(
                    channel: .appStore, providerTransactionID: "t1", cause: .notification, evidence: "inbox:8",
                    at: Fixtures.now)
            }
        }
        let status = try #require(try await ledger.order(number: order.orderNo)).status
        let coins = try await ledger.holdings(userID: order.userID, at: Fixtures.now).balances.first?.amount ?? 0
        return (status, coins)
    }

    @Test(
        "refund first, payment second: refunded in the transaction that records the payment, as in the usual order",
        arguments: TestEngine.available)
    func refundFirst(engine: TestEngine) async throws {
        for signals: [Signal] in [[.refund, .payment], [.payment, .refund]] {
            try await engine.withLedger { _, ledger throws in
                let (status, coins) = try await Self.run(signals, on: ledger)
                #expect(status == .refunded && coins == 0, "\(signals)")
            }
        }
    }

    /// A submission's entry asks with its lookup whether a reversal waits for the transaction (``ReservedPayment``):
    /// the payment's insert then does not ask again, and the refund must still win in that write, whether the payment
    /// adopts an order or pays one the user created before.
    @Test(
        "refund first, then a submission whose entry's lookup found it waiting: refunded in that write, adopting or paying",
        arguments: TestEngine.available, [true, false])
    func refundFirstFoundByTheLookup(engine: TestEngine, adopting: Bool) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let created = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            #expect(try await ledger.reverse(Self.refund("t1"), at: Fixtures.now) == .unknownPayment)
            let query = PaymentQuery(
                channel: .appStore, providerTransactionID: "t1", chainOf: nil,
                order: adopting ? nil : .uuid(created.orderUUID))
            let outcome = try await ledger.atomically { write -> FulfilmentOutcome? in
                let (_, lookup) = try await write.storeInbound(
                    InboxTests.signal("submission of t1", kind: .submission), appliedAt: Fixtures.now,
                    lookingUp: query)
                #expect(lookup.payment == nil)
                guard adopting else {
                    return try await write.fulfil(
                        AdoptionTests.payment(OrderIdentity(orderNo: created.orderNo, orderUUID: created.orderUUID)),
                        at: AdoptionTests.later)
                }
                let identity = Fixtures.randomIdentity()
                return try await write.fulfil(
                    AdoptionTests.payment(identity), adopting: AdoptionTests.adoption(version), as: identity,
                    at: AdoptionTests.later)
            }
            guard case .fulfilled(let order)? = outcome else {
                Issue.record("\(String(describing: outcome))")
                return
            }
            #expect(order.status == .refunded)
            #expect(
                try await ledger.holdings(userID: order.userID, at: AdoptionTests.later).balances.first?.amount == 0)
        }
    }

    @Test("the audit trail names the refund's evidence and the payment's", arguments: TestEngine.available)
    func audit(engine: TestEngine) async throws {
        try await engine.withLedger { _, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            #expect(try await ledger.reverse(Self.refund("t9"), at: Fixtures.now) == .unknownPayment)
            _ = try await ledger.fulfil(Fixtures.payment(order, txn: "t9"), at: Fixtures.now)
            let events = try await ledger.events(orderNo: order.orderNo)
            #expect(events.map(\.kind.rawValue).suffix(3) == ["paid", "fulfilled", "refunded"])
            #expect(events.last?.evidence?.contains("inbox:7") == true)
        }
    }

    @Test(
        "every order of payment, refund and REFUND_REVERSED ends where the usual order ends",
        arguments: TestEngine.available)
    func everyOrder(engine: TestEngine) async throws {
        // The usual order (payment, refund, reversal of the refund) leaves the goods granted; payment and refund alone
        // leave them taken back.
        let permutations: [[Signal]] = [
            [.payment, .refund, .refundReversed], [.payment, .refundReversed, .refund],
            [.refund, .payment, .refundReversed],
            [.refund, .refundReversed, .payment], [.refundReversed, .payment, .refund],
            [.refundReversed, .refund, .payment],
        ]
        for signals in permutations {
            try await engine.withLedger { _, ledger throws in
                let (status, coins) = try await Self.run(signals, on: ledger)
                #expect(status == .fulfilled && coins == 60, "\(signals): \(status), \(coins)")
            }
        }
    }
}

/// A refund and its payment recorded at the same moment on two replicas can pass each other: neither transaction sees
/// the other's row, and the refund is left waiting beside its recorded payment. The inbox sweep applies it.
@Suite("Ledger: a reversal that passed its payment is applied by the sweep")
struct StrandedReversalTests {
    @Test("a refund left waiting beside its recorded payment is applied once", arguments: TestEngine.available)
    func sweep(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            _ = try await ledger.fulfil(Fixtures.payment(order, txn: "t1"), at: Fixtures.now)
            #expect(try await ledger.applyStrandedReversals(at: Fixtures.now, limit: 10) == 0)
            try await database.leaveWaitingReversal(channel: "appstore", providerTransactionID: "t1")
            #expect(try await ledger.applyStrandedReversals(at: Fixtures.now, limit: 10) == 1)
            #expect(try await ledger.order(number: order.orderNo)?.status == .refunded)
            #expect(try await ledger.holdings(userID: order.userID, at: Fixtures.now).balances.first?.amount == 0)
            #expect(try await ledger.applyStrandedReversals(at: Fixtures.now, limit: 10) == 0)
        }
    }

    @Test(
        "a REFUND_REVERSED left waiting beside the refund it cancels is applied once", arguments: TestEngine.available)
    func sweepReinstatement(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            _ = try await ledger.fulfil(Fixtures.payment(order, txn: "t1"), at: Fixtures.now)
            _ = try await ledger.reverse(WaitingReversalTests.refund("t1"), at: Fixtures.now)
            try await database.leaveWaitingReversal("reinstated", channel: "appstore", providerTransactionID: "t1")
            #expect(try await ledger.applyStrandedReversals(at: Fixtures.now, limit: 10) == 1)
            #expect(try await ledger.order(number: order.orderNo)?.status == .fulfilled)
            #expect(try await ledger.holdings(userID: order.userID, at: Fixtures.now).balances.first?.amount == 60)
            #expect(try await ledger.applyStrandedReversals(at: Fixtures.now, limit: 10) == 0)
        }
    }

    @Test(
        "PostgreSQL: a REFUND_REVERSED that finds nothing reversed while another replica applies the refund waits, and the sweep applies it",
        .enabled(if: TestEngine.postgresURL != nil, "needs PostgreSQL"))
    func reinstatementRace() async throws {
        try await TestEngine.postgres.withTwoPools { reinstating, refunding in
            let version = try await reinstating.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await reinstating.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            _ = try await reinstating.fulfil(Fixtures.payment(order, txn: "t1"), at: Fixtures.now)
            try await Self.whileUncommitted(
                on: reinstating,
                { reinstating in
                    // Nothing reversed yet: it waits for the refund.
                    let reinstated = try await reinstating.reinstate(
                        channel: .appStore, providerTransactionID: "t1", cause: .notification, evidence: "inbox:8",
                        at: Fixtures.now)
                    #expect(reinstated == nil)
                }
            ) {
                // The waiting reinstatement is not committed: the refund cannot see it, and is applied.
                guard case .reversed = try await refunding.reverse(WaitingReversalTests.refund("t1"), at: Fixtures.now)
                else {
                    Issue.record("the refund was not applied")
                    return
                }
            }
            #expect(
                try await refunding.order(number: order.orderNo)?.status == .refunded,
                "the race left the reinstatement waiting")
            #expect(try await refunding.applyStrandedReversals(at: Fixtures.now, limit: 10) == 1)
            #expect(try await reinstating.order(number: order.orderNo)?.status == .fulfilled)
            #expect(try await reinstating.holdings(userID: order.userID, at: Fixtures.now).balances.first?.amount == 60)
        }
    }

    @Test(
        "PostgreSQL: a refund reversed while another replica records its payment waits, and the sweep applies it",
        .enabled(if: TestEngine.postgresURL != nil, "needs PostgreSQL"))
    func race() async throws {
        try await TestEngine.postgres.withTwoPools { recording, refunding in
            let version = try await recording.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            let order = try await recording.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
                .order
            try await Self.whileUncommitted(
                on: recording,
                { recording in
                    _ = try await recording.fulfil(Fixtures.payment(order, txn: "t1"), at: Fixtures.now)
                }
            ) {
                // The payment is written but not committed: the refund cannot see it, and waits.
                let outcome = try await refunding.reverse(WaitingReversalTests.refund("t1"), at: Fixtures.now)
                #expect(outcome == .unknownPayment)
            }
            #expect(
                try await refunding.order(number: order.orderNo)?.status == .fulfilled,
                "the race left the refund waiting")
            #expect(try await refunding.applyStrandedReversals(at: Fixtures.now, limit: 10) == 1)
            #expect(try await recording.order(number: order.orderNo)?.status == .refunded)
            #expect(try await recording.holdings(userID: order.userID, at: Fixtures.now).balances.first?.amount == 0)
        }
    }

    /// Runs `written` in a write of `ledger`, then `meanwhile` while that write is not committed yet, then commits it.
    private static func whileUncommitted(
        on ledger: SQLLedger, _ written: @escaping @Sendable (any LedgerWrite) async throws -> Void,
        meanwhile: () async throws -> Void
    ) async throws {
        let (done, signal) = AsyncStream<Void>.makeStream()
        let (gate, opening) = AsyncStream<Void>.makeStream()
        async let write: Void = ledger.atomically { ledger in
            try await written(ledger)
            signal.yield()
            var waiting = gate.makeAsyncIterator()
            _ = await waiting.next()
        }
        var doneIterator = done.makeAsyncIterator()
        _ = await doneIterator.next()
        try await meanwhile()
        opening.yield()
        try await write
    }
}
