import Foundation
import HummingbirdTesting
import LedgerTestSupport
import OrderSafeModel
import Sandbox
import Testing

@testable import OrderSafeServer

/// A restore follows the App Store's history of a customer, and a customer (an Apple account) is often shared: a
/// family iPad, a phone handed on. Holding one of another customer's signed transactions, or sharing their Apple
/// account, must gain nobody the other's purchases, nor their ids.
@Suite("Restore: nobody gains another customer's purchases")
struct RestoreOwnershipTests {
    static let coins = AppStoreFlowTests.coins
    static let sync = "/v1/appstore/sync"

    @Test(
        "Bob restores with Alice's signed transaction: recorded for Alice; her unbound purchase is neither adopted for Bob nor listed, and her app then records it for her",
        arguments: TestEngine.available)
    func anotherCustomersTransaction(engine: TestEngine) async throws {
        try await TestServer.withComponents(engine: engine) { client, components, _ in
            let alice = try await TestServer.token("alice", lifetime: 86400)
            let bob = try await TestServer.token("bob", lifetime: 86400)
            let store = components.sandbox!.appStore
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            // T1 bound to Alice's order; T2 bought without an appAccountToken, not yet submitted by her app.
            let (t1, jws1) = try await store.purchase(
                productID: Self.coins, appAccountToken: order.orderUUID, device: "alices-phone")
            let (t2, jws2) = try await store.purchase(productID: Self.coins, device: "alices-phone")

            let restore = try await AppStoreFlowTests.submit(
                client, token: bob, #"{"signed_transactions":["\#(jws1)"]}"#, path: Self.sync)
            #expect(restore.status == .ok, "\(String(buffer: restore.body))")
            let answer = try restore.decoded(AppStoreSubmissionResponse.self)
            #expect(answer.transactions.map(\.transactionID) == [t1], "only what Bob sent: \(answer)")
            #expect(answer.transactions.allSatisfy { $0.verdict == .recorded && $0.order == nil })
            #expect(try await AppStoreFlowTests.balance(client, token: bob) == 0)
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 60)

            let hers = try await AppStoreFlowTests.submit(client, token: alice, jws: jws2)
            #expect(hers.transactionID == t2 && hers.verdict == .recorded && hers.order?.status == .fulfilled)
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 120)
            #expect(try await AppStoreFlowTests.balance(client, token: bob) == 0)
        }
    }

    @Test(
        "on a shared Apple account, Bob's restore of his own purchase records his chain and leaves Alice's unbound purchase for her",
        arguments: TestEngine.available)
    func sharedAppleAccount(engine: TestEngine) async throws {
        try await TestServer.withComponents(engine: engine) { client, components, _ in
            let alice = try await TestServer.token("alice", lifetime: 86400)
            let bob = try await TestServer.token("bob", lifetime: 86400)
            let store = components.sandbox!.appStore
            let bobs = try await TestServer.createOrder(client, token: bob).decoded(OrderResponse.self).order
            let (mine, jws) = try await store.purchase(
                productID: Self.coins, appAccountToken: bobs.orderUUID, device: "family-ipad")
            let (theirs, theirJWS) = try await store.purchase(productID: Self.coins, device: "family-ipad")

            let restore = try await AppStoreFlowTests.submit(
                client, token: bob, #"{"signed_transactions":["\#(jws)"]}"#, path: Self.sync)
            let answer = try restore.decoded(AppStoreSubmissionResponse.self)
            #expect(answer.transactions.map(\.transactionID) == [mine], "\(answer)")
            #expect(answer.transactions.first?.order?.orderNo == bobs.orderNo)
            #expect(try await AppStoreFlowTests.balance(client, token: bob) == 60)

            let hers = try await AppStoreFlowTests.submit(client, token: alice, jws: theirJWS)
            #expect(hers.transactionID == theirs && hers.order?.userID == "alice")
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 60)
            #expect(try await AppStoreFlowTests.balance(client, token: bob) == 60)
        }
    }

    @Test(
        "a restore with another customer's subscription follows nothing of theirs: their renewal nobody brought waits for their own app or Apple",
        arguments: TestEngine.available)
    func anotherCustomersChain(engine: TestEngine) async throws {
        try await TestServer.withComponents(engine: engine) { client, components, _ in
            let alice = try await TestServer.token("alice", lifetime: 86400)
            let bob = try await TestServer.token("bob", lifetime: 86400)
            let store = components.sandbox!.appStore
            let monthly = "com.example.ordersafe.vip.monthly"
            let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            let (first, jws) = try await store.purchase(
                productID: monthly, type: "Auto-Renewable Subscription", appAccountToken: order.orderUUID,
                device: "alices-phone")
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
            // A renewal whose notification was lost and that Alice's app has not seen yet.
            let (renewal, _) = try await store.purchase(
                productID: monthly, type: "Auto-Renewable Subscription", originalTransactionID: first,
                device: "alices-phone")

            let restore = try await AppStoreFlowTests.submit(
                client, token: bob, #"{"signed_transactions":["\#(jws)"]}"#, path: Self.sync)
            let answer = try restore.decoded(AppStoreSubmissionResponse.self)
            #expect(answer.transactions.map(\.transactionID) == [first] && answer.transactions[0].order == nil)
            #expect(
                try await components.ledger.payment(channel: .appStore, providerTransactionID: renewal) == nil,
                "Bob's restore walked Alice's history")
            // Alice's own restore brings it, for her.
            let hers = try await AppStoreFlowTests.submit(
                client, token: alice, #"{"signed_transactions":["\#(jws)"]}"#, path: Self.sync)
            #expect(
                try hers.decoded(AppStoreSubmissionResponse.self).transactions.map(\.transactionID) == [first, renewal])
        }
    }
}
