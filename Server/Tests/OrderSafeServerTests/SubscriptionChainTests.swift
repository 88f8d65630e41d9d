import Foundation
import HTTPTypes
import HummingbirdTesting
import Ledger
import LedgerTestSupport
import NIOCore
@_spi(OrderSafeServer) import OrderSafeModel
import Sandbox
import Testing

@testable import OrderSafeServer

/// A subscription history as Apple delivers it: the original purchase the app never submitted, renewals, a refund of
/// one of them. The app submits one renewal (installed after the first purchase, or restored). Whatever the order
/// of the notifications and wherever the app's submission falls among them, the ledger ends the same.
@Suite("Subscription chains: renewals reach whoever owns any transaction of the chain")
struct SubscriptionChainTests {
    static let monthly = "com.example.ordersafe.vip.monthly"

    struct History {
        var transactions: [String]
        /// (signed notification, signedDate order)
        var notifications: [String]
        var submitted: String
        var refunded: String
        var latestEnd: Date
    }

    /// Original purchase (no appAccountToken), four renewals a day apart, a refund of the second renewal.
    static func history(_ store: SandboxAppStore, clock: ManualClock) async throws -> History {
        var transactions: [String] = []
        var signed: [String] = []
        var notifications: [String] = []
        let (original, first) = try await store.purchase(productID: monthly, type: "Auto-Renewable Subscription")
        transactions.append(original)
        signed.append(first)
        notifications.append(try await store.notification(type: "SUBSCRIBED", signedTransaction: first))
        for _ in 0..<4 {
            clock.advance(by: 86400)
            let (id, jws) = try await store.purchase(
                productID: monthly, type: "Auto-Renewable Subscription", originalTransactionID: original)
            transactions.append(id)
            signed.append(jws)
            notifications.append(try await store.notification(type: "DID_RENEW", signedTransaction: jws))
        }
        clock.advance(by: 3600)
        let refundedJWS = try await store.refund(transactionID: transactions[2])
        notifications.append(try await store.notification(type: "REFUND", signedTransaction: refundedJWS))
        return History(
            transactions: transactions, notifications: notifications, submitted: signed[3], refunded: transactions[2],
            latestEnd: Date(millisecondsSince1970: try Self.expiresDate(signed[4])))
    }

    static func expiresDate(_ jws: String) throws -> Int64 {
        var segment = String(jws.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while segment.count % 4 != 0 { segment += "=" }
        let data = try #require(Data(base64Encoded: segment))
        let payload = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require((payload["expiresDate"] as? NSNumber)?.int64Value)
    }

    @Test("with the Server API, a chain's first owner gets its whole history at once, though no notification came")
    func historyOfNewChain() async throws {
        try await TestServer.withComponents { client, components, clock in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
            let (original, _) = try await store.purchase(productID: Self.monthly, type: "Auto-Renewable Subscription")
            clock.advance(by: 86400)
            let (first, _) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", originalTransactionID: original)
            clock.advance(by: 86400)
            let (latest, renewal) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", originalTransactionID: original)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: renewal).verdict == .recorded)
            _ = try await components.runner.runDue()  // the chain's history, queued with its first payment
            for transaction in [original, first, latest] {
                let payment = try await components.ledger.payment(
                    channel: .appStore, providerTransactionID: transaction)
                #expect(payment?.userID == "alice", "\(transaction)")
            }
        }
    }

    @Test(
        "a new subscription is answered without waiting for Apple's Server API: down, the purchase is recorded at once and its history pulled once the API is back"
    )
    func answerNeverWaitsOnApple() async throws {
        try await TestServer.withComponents { client, components, clock in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
            let (original, _) = try await store.purchase(productID: Self.monthly, type: "Auto-Renewable Subscription")
            clock.advance(by: 86400)
            let (latest, renewal) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", originalTransactionID: original)
            await store.inject(.serverError, count: 100)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: renewal).verdict == .recorded)
            // Answered without a single call to the Server API (whose three attempts with backoff took seconds, and
            // with Apple unreachable, 31 s).
            #expect(await store.pendingFaults == 100)
            #expect(try await components.ledger.payment(channel: .appStore, providerTransactionID: latest) != nil)
            #expect(try await components.ledger.payment(channel: .appStore, providerTransactionID: original) == nil)
            _ = try await components.runner.runDue()  // Apple still down: the job stays queued
            #expect(try await components.ledger.payment(channel: .appStore, providerTransactionID: original) == nil)
            await store.clearFaults()
            clock.advance(by: 3600)
            _ = try await components.runner.runDue()
            #expect(
                try await components.ledger.payment(channel: .appStore, providerTransactionID: original)?.userID
                    == "alice")
        }
    }

    @Test(
        "the Server API made unreachable, then slow, by the sandbox's faults route: a new subscription is answered at once; its history is pulled at the API's pace"
    )
    func serverAPIStates() async throws {
        try await TestServer.withComponents { client, components, clock in
            let store = components.sandbox!.appStore
            func set(_ state: String) async throws -> HTTPResponse.Status {
                try await client.execute(
                    uri: "/sandbox/appstore/faults", method: .post,
                    body: ByteBuffer(string: #"{"faults":["server_api:\#(state)"]}"#)
                ).status
            }
            #expect(try await set("slow_ms:x") == .badRequest)
            #expect(try await set("unreachable") == .ok)
            let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
            let (original, _) = try await store.purchase(productID: Self.monthly, type: "Auto-Renewable Subscription")
            clock.advance(by: 86400)
            let (_, renewal) = try await store.purchase(
                productID: Self.monthly, type: "Auto-Renewable Subscription", originalTransactionID: original)
            let asked = await store.serverAPIAttempts
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: renewal).verdict == .recorded)
            #expect(await store.serverAPIAttempts == asked, "answered without a call to Apple (one would hang)")
            #expect(try await set("slow_ms:300") == .ok)
            let pulling = ContinuousClock.now
            _ = try await components.runner.runDue()
            #expect(ContinuousClock.now - pulling >= .milliseconds(300), "the pull waited for the slow API")
            #expect(await store.serverAPIAttempts > asked, "the history was asked for by the job")
            #expect(
                try await components.ledger.payment(channel: .appStore, providerTransactionID: original)?.userID
                    == "alice")
            #expect(try await set("up") == .ok)
        }
    }

    @Test(
        "notifications that waited for a chain's owner are applied as the app's renewal is recorded, without the history pull"
    )
    func waitingAppliedOnRecord() async throws {
        try await TestServer.withComponents { client, components, clock in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
            let history = try await Self.history(store, clock: clock)
            for notification in history.notifications {
                #expect(try await AppStoreFlowTests.notify(client, notification) == .ok)  // no owner yet: each waits
            }
            await store.inject(.serverError, count: 100)  // the history pull fails: only the waiting signals can tell
            #expect(
                try await AppStoreFlowTests.submit(client, token: alice, jws: history.submitted).verdict == .recorded)
            for transaction in history.transactions {
                let payment = try #require(
                    try await components.ledger.payment(channel: .appStore, providerTransactionID: transaction),
                    "\(transaction) not recorded")
                #expect(payment.userID == "alice")
                let status = try await components.ledger.order(number: payment.orderNo)?.status
                #expect(
                    status == (transaction == history.refunded ? .refunded : .fulfilled),
                    "\(transaction): \(String(describing: status))")
            }
        }
    }

    enum Position: String, CaseIterable {
        case first, middle, last
    }

    static let cases: [(TestEngine, Position, Bool)] = TestEngine.available.flatMap { engine in
        Position.allCases.flatMap { position in [false, true].map { (engine, position, $0) } }
    }

    @Test(
        "the app's renewal first, in the middle or last; notifications in Apple's order or shuffled: one ledger",
        arguments: cases)
    func replay(engine: TestEngine, position: Position, shuffled: Bool) async throws {
        try await TestServer.withComponents(engine: engine) { client, components, clock in
            let store = components.sandbox!.appStore
            let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
            let history = try await Self.history(store, clock: clock)
            var notifications = history.notifications
            if shuffled {
                var random = SeededRandom(state: 17)
                notifications.shuffle(using: &random)
            }
            let at =
                switch position {
                case .first: 0
                case .middle: notifications.count / 2
                case .last: notifications.count
                }
            for (index, notification) in notifications.enumerated() {
                if index == at { _ = try await AppStoreFlowTests.submit(client, token: alice, jws: history.submitted) }
                #expect(try await AppStoreFlowTests.notify(client, notification) == .ok)
            }
            if at == notifications.count {
                _ = try await AppStoreFlowTests.submit(client, token: alice, jws: history.submitted)
            }

            var orders = Set<String>()
            for transaction in history.transactions {
                let payment = try #require(
                    try await components.ledger.payment(channel: .appStore, providerTransactionID: transaction),
                    "\(transaction) not recorded")
                #expect(payment.userID == "alice")
                orders.insert(payment.orderNo)
                let status = try await components.ledger.order(number: payment.orderNo)?.status
                #expect(
                    status == (transaction == history.refunded ? .refunded : .fulfilled),
                    "\(transaction): \(String(describing: status))")
            }
            #expect(orders.count == history.transactions.count)
            #expect(try await AppStoreFlowTests.vipExpiry(client, token: alice) == history.latestEnd)
        }
    }
}
