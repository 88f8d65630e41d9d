import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Sandbox
import Testing

@testable import Engine
@testable import OrderSafeServer

@Suite(
    "App Store through the server: submissions bound to orders, adopted, refused, notified and refunded exactly once")
struct AppStoreFlowTests {
    /// Runs `body` against a fresh server and its built-in App Store.
    static func withServer(
        _ body: @escaping @Sendable (any TestClientProtocol, SandboxAppStore) async throws -> Void
    ) async throws {
        try await TestServer.withComponents { client, components, _ in
            try await body(client, components.sandbox!.appStore)
        }
    }

    static let coins = "com.example.ordersafe.coins60"

    static func submit(
        _ client: some TestClientProtocol, token: String, _ body: String, path: String = "/v1/appstore/transactions"
    ) async throws -> TestResponse {
        try await client.execute(
            uri: path, method: .post, headers: TestServer.bearer(token), body: ByteBuffer(string: body))
    }

    static func submit(_ client: some TestClientProtocol, token: String, jws: String) async throws
        -> AppStoreTransactionResult
    {
        let response = try await submit(client, token: token, #"{"signed_transaction":"\#(jws)"}"#)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        let decoded = try response.decoded(AppStoreSubmissionResponse.self)
        #expect(decoded.transactions.count == 1)
        return decoded.transactions[0]
    }

    static func balance(_ client: some TestClientProtocol, token: String) async throws -> Int64 {
        let holdings = try await client.execute(
            uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
        return try holdings.decoded(HoldingsResponse.self).balances.first { $0.name == "coins" }?.amount ?? 0
    }

    static func notify(_ client: some TestClientProtocol, _ signedPayload: String) async throws -> HTTPResponse.Status {
        try await client.execute(
            uri: "/v1/notify/appstore", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(string: #"{"signedPayload":"\#(signedPayload)"}"#)
        ).status
    }

    @Test(
        "a purchase bound by appAccountToken is recorded once, however often and however concurrently it is submitted")
    func bound() async throws {
        try await Self.withServer { client, store in
            let alice = try await TestServer.token("alice")
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let (id, jws) = try await store.purchase(productID: Self.coins, appAccountToken: order.orderUUID)
            let results = try await withThrowingTaskGroup(of: AppStoreTransactionResult.self) { group in
                for _ in 0..<8 { group.addTask { try await Self.submit(client, token: alice, jws: jws) } }
                return try await group.reduce(into: [AppStoreTransactionResult]()) { $0.append($1) }
            }
            for result in results {
                #expect(
                    result.verdict == .recorded && result.transactionID == id && result.order?.orderNo == order.orderNo)
            }
            #expect(results.contains { $0.order?.status == .fulfilled })
            #expect(try await Self.balance(client, token: alice) == 60)
            // Its owner reads the order with the transaction that paid it (what Apple's refund sheet takes); nobody else.
            let read = try await client.execute(
                uri: "/v1/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(alice))
            #expect(try read.decoded(OrderResponse.self).providerTransactionID == id)
            let bob = try await TestServer.token("bob")
            let foreign = try await client.execute(
                uri: "/v1/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(bob))
            #expect(foreign.status == .notFound)
        }
    }

    @Test(
        "a resend this server applied is answered while the writer is busy; one it does not remember (another replica's, or from before a restart) is answered from what is recorded, credited once"
    )
    func resends() async throws {
        try await TestServer.withComponents { client, components, _ in
            let alice = try await TestServer.token("alice")
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let (id, jws) = try await components.sandbox!.appStore.purchase(
                productID: Self.coins, appAccountToken: order.orderUUID)
            #expect(try await Self.submit(client, token: alice, jws: jws).order?.status == .fulfilled)
            let entries = try await components.ledger.inboxFootprint().entries

            // The writer held by a write that waits (SQLite has one): the resend must not queue behind it.
            let (holding, held) = AsyncStream<Void>.makeStream()
            let (release, releasing) = AsyncStream<Void>.makeStream()
            let holder = Task {
                try await components.ledger.atomically { _ in
                    held.yield()
                    for await _ in release {}
                }
            }
            for await _ in holding { break }
            let resent = await withTaskGroup(of: AppStoreTransactionResult?.self) { group in
                group.addTask { try? await Self.submit(client, token: alice, jws: jws) }
                group.addTask {
                    try? await Task.sleep(for: .seconds(20))
                    return nil
                }
                let first = await group.next() ?? nil
                releasing.finish()
                group.cancelAll()
                return first
            }
            try await holder.value
            #expect(
                resent?.verdict == .recorded && resent?.transactionID == id && resent?.order?.orderNo == order.orderNo)

            let appStore = try #require(components.appStore)
            let forgetful = AppStorePayments(
                verifier: appStore.verifier, receipts: appStore.receipts, api: appStore.api, offers: appStore.offers,
                offerHook: nil,
                answersConsumptionRequests: appStore.answersConsumptionRequests, identities: appStore.identities,
                context: appStore.context,
                applied: AppliedSubmissions())
            let again = try await forgetful.submit(AppStoreSubmission(signedTransaction: jws), userID: "alice")
                .transactions
            #expect(
                again.count == 1 && again.first?.verdict == .recorded && again.first?.order?.orderNo == order.orderNo)
            #expect(again.first?.order?.status == .fulfilled)
            #expect(try await Self.balance(client, token: alice) == 60)
            #expect(try await components.ledger.inboxFootprint().entries == entries)
        }
    }

    @Test("an unbound transaction is adopted into a new order for the submitting user, once")
    func adopted() async throws {
        try await Self.withServer { client, store in
            let bob = try await TestServer.token("bob")
            let (_, jws) = try await store.purchase(productID: Self.coins)
            let first = try await Self.submit(client, token: bob, jws: jws)
            let second = try await Self.submit(client, token: bob, jws: jws)
            #expect(first.verdict == .recorded && first.order?.userID == "bob" && first.order?.status == .fulfilled)
            #expect(second.order?.orderNo == first.order?.orderNo)
            #expect(try await Self.balance(client, token: bob) == 60)
        }
    }

    @Test(
        "another user's transaction is recorded for its owner only, its order not shown; two users racing with one receipt credit one"
    )
    func otherUser() async throws {
        try await Self.withServer { client, store in
            let alice = try await TestServer.token("alice")
            let mallory = try await TestServer.token("mallory")
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let (_, jws) = try await store.purchase(productID: Self.coins, appAccountToken: order.orderUUID)
            let stolen = try await Self.submit(client, token: mallory, jws: jws)
            #expect(stolen.verdict == .recorded && stolen.order == nil && stolen.error == nil, "\(stolen)")
            #expect(try await Self.balance(client, token: mallory) == 0)
            #expect(try await Self.balance(client, token: alice) == 60)  // the payment is alice's: credited to her

            let (_, unbound) = try await store.purchase(productID: Self.coins)
            let carol = try await TestServer.token("carol")
            let dave = try await TestServer.token("dave")
            async let c = Self.submit(client, token: carol, jws: unbound)
            async let d = Self.submit(client, token: dave, jws: unbound)
            let results = try await [c, d]
            #expect(
                results.allSatisfy { $0.verdict == .recorded } && results.filter { $0.order != nil }.count == 1,
                "\(results)")
            #expect(try await Self.balance(client, token: carol) + Self.balance(client, token: dave) == 60)
        }
    }

    @Test(
        "bad input: a tampered JWS is rejected, so is one under a chain of its own (a forgery, never held), a malformed body is 400, an unknown product keeps it unfinished (409)"
    )
    func badInput() async throws {
        try await Self.withServer { client, store in
            let alice = try await TestServer.token("alice")
            var (_, jws) = try await store.purchase(productID: Self.coins)
            // The signature's first character: all six of its bits are the signature's (its last character's are
            // partly padding, which a decoder may ignore — tampering there passed now and then).
            let signature = jws.index(after: try #require(jws.lastIndex(of: ".")))
            jws.replaceSubrange(signature...signature, with: jws[signature] == "A" ? "B" : "A")
            let tampered = try await Self.submit(client, token: alice, jws: jws)
            #expect(tampered.verdict == .rejected && tampered.error?.code == "invalid_transaction")
            #expect(
                try await Self.submit(client, token: alice, #"{"signed_transaction":""}"#).decoded(
                    AppStoreSubmissionResponse.self
                ).verdict == .rejected)
            let foreign = try SandboxAppStoreCA(now: TestServer.now).sign(
                #"{"transactionId":"1","productId":"\#(Self.coins)","bundleId":"com.example.ordersafe","environment":"Sandbox","signedDate":1795000000000}"#
            )
            let forged = try await Self.submit(client, token: alice, jws: foreign)
            #expect(forged.verdict == .rejected && forged.error?.message.hasPrefix("INVALID_CHAIN") == true)
            let huge = try await Self.submit(
                client, token: alice, #"{"signed_transaction":"\#(String(repeating: "a", count: 20_000)).b.c"}"#)
            let hugeResult = try huge.decoded(AppStoreSubmissionResponse.self).transactions.first
            #expect(
                huge.status == .ok && hugeResult?.verdict == .rejected
                    && hugeResult?.error?.code == "invalid_transaction", "no transaction is 20 KB")
            for body in [#"{}"#, #"{"signed_transaction":"a","receipt":"b"}"#, #"not json"#] {
                let response = try await Self.submit(client, token: alice, body)
                #expect(response.status == .badRequest, "\(body)")
            }
            let unknown = try await Self.submit(
                client, token: alice,
                #"{"signed_transaction":"\#(try await store.purchase(productID: "com.example.unknown").signed)"}"#)
            #expect(unknown.status == .conflict)
            #expect(try unknown.errorCode() == "unknown_app_store_product")
            let anonymous = try await client.execute(
                uri: "/v1/appstore/transactions", method: .post, body: ByteBuffer(string: "{}"))
            #expect(anonymous.status == .unauthorized)
            #expect(try await Self.balance(client, token: alice) == 0)
        }
    }

    @Test(
        "a notification that arrives first fulfils the order; the app's later submission is recorded; a refund reverses once"
    )
    func notifications() async throws {
        try await Self.withServer { client, store in
            let alice = try await TestServer.token("alice")
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let (id, jws) = try await store.purchase(productID: Self.coins, appAccountToken: order.orderUUID)
            let charge = try await store.notification(type: "ONE_TIME_CHARGE", signedTransaction: jws)
            #expect(try await Self.notify(client, charge) == .ok)
            #expect(try await Self.notify(client, charge) == .ok)  // Apple retries
            #expect(try await Self.balance(client, token: alice) == 60)
            #expect(try await Self.submit(client, token: alice, jws: jws).verdict == .recorded)
            #expect(try await Self.balance(client, token: alice) == 60)

            let refund = try await store.notification(type: "REFUND", signedTransaction: jws)
            #expect(try await Self.notify(client, refund) == .ok)
            #expect(
                try await Self.notify(client, try await store.notification(type: "REFUND", signedTransaction: jws))
                    == .ok)
            #expect(try await Self.balance(client, token: alice) == 0)
            let read = try await client.execute(
                uri: "/v1/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(alice))
            #expect(try read.decoded(OrderResponse.self).order.status == .refunded)
            _ = id

            // Apple reverses the refund: granted again, once.
            let reversed = try await store.notification(type: "REFUND_REVERSED", signedTransaction: jws)
            #expect(try await Self.notify(client, reversed) == .ok)
            #expect(
                try await Self.notify(
                    client, try await store.notification(type: "REFUND_REVERSED", signedTransaction: jws)) == .ok)
            #expect(try await Self.balance(client, token: alice) == 60)
            let again = try await client.execute(
                uri: "/v1/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(alice))
            #expect(try again.decoded(OrderResponse.self).order.status == .fulfilled)

            #expect(try await Self.notify(client, "not.a.jws") == .unauthorized)
            let garbage = try await client.execute(
                uri: "/v1/notify/appstore", method: .post, body: ByteBuffer(string: "[]"))
            #expect(garbage.status == .badRequest)
            #expect(
                try await Self.notify(client, try await store.notification(type: "TEST", signedTransaction: nil)) == .ok
            )
        }
    }

    @Test(
        "renewals of a subscription are adopted for its owner and extend the entitlement; a StoreKit 1 receipt is accepted"
    )
    func renewalsAndReceipts() async throws {
        try await Self.withServer { client, store in
            let alice = try await TestServer.token("alice")
            let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let monthly = "com.example.ordersafe.vip.monthly"
            let (first, jws) = try await store.purchase(
                productID: monthly, type: "Auto-Renewable Subscription", appAccountToken: order.orderUUID)
            #expect(try await Self.submit(client, token: alice, jws: jws).order?.orderNo == order.orderNo)
            let (_, renewal) = try await store.purchase(
                productID: monthly, type: "Auto-Renewable Subscription", originalTransactionID: first)
            #expect(
                try await Self.notify(
                    client, try await store.notification(type: "DID_RENEW", signedTransaction: renewal)) == .ok)
            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            let vip = try holdings.decoded(HoldingsResponse.self).entitlements.first { $0.name == "vip" }
            #expect(vip?.expiresAt.map { $0.timeIntervalSince(TestServer.now) > 58 * 86400 } == true)

            let bob = try await TestServer.token("bob")
            let bobOrder = try await TestServer.createOrder(client, token: bob).decoded(OrderResponse.self).order
            let (coinsID, _) = try await store.purchase(productID: Self.coins)
            let receipt = try await store.appReceipt()
            let response = try await Self.submit(
                client, token: bob,
                #"{"receipt":"\#(receipt)","transaction_id":"\#(coinsID)","application_username":"\#(bobOrder.orderUUID.uuidString)"}"#
            )
            let decoded = try response.decoded(AppStoreSubmissionResponse.self)
            #expect(decoded.verdict == .recorded && decoded.transactions.first?.order?.orderNo == bobOrder.orderNo)
            #expect(try await Self.balance(client, token: bob) == 60)
            let garbage = try await Self.submit(client, token: bob, #"{"receipt":"AAAA"}"#).decoded(
                AppStoreSubmissionResponse.self)
            #expect(garbage.verdict == .rejected && garbage.transactions.first?.error?.code == "invalid_receipt")
        }
    }

    @Test(
        "a subscription runs until Apple's expiresDate; RENEWAL_EXTENDED moves it once, however often it is delivered")
    func renewalExtended() async throws {
        try await Self.withServer { client, store in
            let alice = try await TestServer.token("alice")
            let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let (first, jws) = try await store.purchase(
                productID: "com.example.ordersafe.vip.monthly", type: "Auto-Renewable Subscription",
                appAccountToken: order.orderUUID,
                subscriptionPeriod: GrantPeriod(count: 7, unit: .day))
            #expect(try await Self.submit(client, token: alice, jws: jws).verdict == .recorded)
            // Apple's week, not the catalog's month
            #expect(try await Self.vipExpiry(client, token: alice) == TestServer.now.addingTimeInterval(7 * 86400))

            let extended = try await store.extendRenewalDate(originalTransactionID: first, days: 5)
            let notification = try await store.notification(type: "RENEWAL_EXTENDED", signedTransaction: extended)
            for _ in 0..<2 { #expect(try await Self.notify(client, notification) == .ok) }
            #expect(
                try await Self.notify(
                    client, try await store.notification(type: "RENEWAL_EXTENDED", signedTransaction: extended)) == .ok)
            #expect(try await Self.vipExpiry(client, token: alice) == TestServer.now.addingTimeInterval(12 * 86400))
            // the old signature moves nothing back
            #expect(try await Self.submit(client, token: alice, jws: jws).verdict == .recorded)
            #expect(try await Self.vipExpiry(client, token: alice) == TestServer.now.addingTimeInterval(12 * 86400))
        }
    }

    static func vipExpiry(_ client: some TestClientProtocol, token: String) async throws -> Date? {
        let holdings = try await client.execute(
            uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
        return try holdings.decoded(HoldingsResponse.self).entitlements.first { $0.name == "vip" }?.expiresAt
    }
}

@Suite("App Store history: gaps filled from the notification history, restores follow the transaction history")
struct AppStoreHistoryTests {
    @Test(
        "a purchase whose notification never came and that the app never submitted is found in the notification history"
    )
    func notificationHistory() async throws {
        try await TestServer.withComponents { client, components, _ in
            let alice = try await TestServer.token("alice", lifetime: 86400)
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            try await components.sandbox!.appStore.purchase(
                productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
            _ = try await components.runner.runDue()  // the hourly history pull is due at start
            #expect(try await components.ledger.order(number: order.orderNo)?.status == .fulfilled)
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 60)
        }
    }

    @Test("history pulls start where the last one ended: a purchase made while the server was down for days is found")
    func historyWatermark() async throws {
        try await TestServer.withComponents { client, components, clock in
            let alice = try await TestServer.token("alice", lifetime: 86400)
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            _ = try await components.runner.runDue()  // the first pull, at start
            clock.advance(by: 86400)
            try await components.sandbox!.appStore.purchase(
                productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
            clock.advance(by: 2 * 86400)  // nothing runs for two more days; the notification never arrived
            _ = try await components.runner.runDue()
            #expect(try await components.ledger.order(number: order.orderNo)?.status == .fulfilled)
        }
    }

    @Test("restore records the renewals nobody brought, once; a restore of another user's subscription is refused")
    func restore() async throws {
        try await TestServer.withComponents { client, components, _ in
            let alice = try await TestServer.token("alice", lifetime: 86400)
            let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let store = components.sandbox!.appStore
            let monthly = "com.example.ordersafe.vip.monthly"
            let (first, jws) = try await store.purchase(
                productID: monthly, type: "Auto-Renewable Subscription", appAccountToken: order.orderUUID)
            for _ in 0..<2 {
                try await store.purchase(
                    productID: monthly, type: "Auto-Renewable Subscription", originalTransactionID: first)
            }
            for _ in 0..<2 {
                let response = try await AppStoreFlowTests.submit(
                    client, token: alice, #"{"signed_transactions":["\#(jws)"]}"#, path: "/v1/appstore/sync")
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                let decoded = try response.decoded(AppStoreSubmissionResponse.self)
                #expect(decoded.verdict == .recorded && decoded.transactions.count == 3)
            }
            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            let vip = try holdings.decoded(HoldingsResponse.self).entitlements.first { $0.name == "vip" }
            #expect(
                // three months, not six
                vip?.expiresAt.map { (88 * 86400...93 * 86400).contains($0.timeIntervalSince(TestServer.now)) } == true)

            let mallory = try await TestServer.token("mallory", lifetime: 86400)
            let stolen = try await AppStoreFlowTests.submit(
                client, token: mallory, #"{"signed_transactions":["\#(jws)"]}"#, path: "/v1/appstore/sync")
            // Recorded for their owner (the other device may finish them), nothing shown or granted to mallory.
            let theirs = try stolen.decoded(AppStoreSubmissionResponse.self)
            #expect(theirs.verdict == .recorded && theirs.transactions.allSatisfy { $0.order == nil }, "\(theirs)")
            let mallorys = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(mallory))
            #expect(try mallorys.decoded(HoldingsResponse.self).entitlements.isEmpty)
            let empty = try await AppStoreFlowTests.submit(client, token: mallory, #"{}"#, path: "/v1/appstore/sync")
            #expect(empty.status == .badRequest)
        }
    }

    @Test("a CONSUMPTION_REQUEST is answered with the delivery status, through the App Store Server API")
    func consumptionRequest() async throws {
        try await TestServer.withComponents { client, components, _ in
            let alice = try await TestServer.token("alice", lifetime: 86400)
            let store = components.sandbox!.appStore
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let (id, jws) = try await store.purchase(
                productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
            let request = try await store.notification(type: "CONSUMPTION_REQUEST", signedTransaction: jws)
            #expect(try await AppStoreFlowTests.notify(client, request) == .ok)
            let report = try #require(await store.consumptionReports[id])
            let text = String(decoding: report, as: UTF8.self)
            #expect(text.contains(#""deliveryStatus":0"#) && text.contains(#""customerConsented":true"#))
            #expect(text.contains(order.orderUUID.uuidString.lowercased()))
        }
    }

    @Test("a refund that passed its payment (replicas recording both at once) is applied by the inbox sweep")
    func strandedRefundSwept() async throws {
        try await TestServer.withComponents { client, components, clock in
            let bob = try await TestServer.token("bob", lifetime: 86400)
            let (transactionID, jws) = try await components.sandbox!.appStore.purchase(
                productID: AppStoreFlowTests.coins)
            let recorded = try await AppStoreFlowTests.submit(client, token: bob, jws: jws)
            #expect(recorded.verdict == .recorded)
            #expect(try await AppStoreFlowTests.balance(client, token: bob) == 60)
            try await components.database.leaveWaitingReversal(
                channel: "appstore", providerTransactionID: transactionID)
            clock.advance(by: 301)
            _ = try await components.runner.runDue()
            #expect(try await AppStoreFlowTests.balance(client, token: bob) == 0)
            #expect(
                try await components.ledger.order(number: try #require(recorded.order).orderNo)?.status == .refunded)
        }
    }

    @Test("a notification stored while its transaction was unbound is processed again by the inbox sweep")
    func inboxSweep() async throws {
        try await TestServer.withComponents { client, components, clock in
            let bob = try await TestServer.token("bob", lifetime: 86400)
            let store = components.sandbox!.appStore
            let (_, jws) = try await store.purchase(productID: AppStoreFlowTests.coins)
            let notification = try await store.notification(type: "ONE_TIME_CHARGE", signedTransaction: jws)
            #expect(try await AppStoreFlowTests.notify(client, notification) == .ok)
            let pending = {
                try await components.ledger.pendingSignals(
                    channels: [.appStore], before: clock.now() + 3600, maxAttempts: 10, limit: 10)
            }
            #expect(try await pending().count == 1)  // unbound: waiting for the app
            #expect(try await AppStoreFlowTests.submit(client, token: bob, jws: jws).verdict == .recorded)
            clock.advance(by: 301)
            _ = try await components.runner.runDue()
            #expect(try await pending().isEmpty)
            #expect(try await AppStoreFlowTests.balance(client, token: bob) == 60)
        }
    }
}
