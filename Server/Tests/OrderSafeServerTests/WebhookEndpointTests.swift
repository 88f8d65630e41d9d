import Foundation
import Hummingbird
import HummingbirdTesting
import OrderSafeModel
import Synchronization
import Testing

@testable import OrderSafeServer

/// The outbox holds events for an endpoint that will take them: with no `webhooks.url` a submission writes none (three
/// rows of an order's JSON per submission, a tenth of its CPU, kept for ever for nobody); with one, every state change.
@Suite("Merchant webhooks: events are kept only for a configured endpoint")
struct WebhookEndpointTests {
    /// The webhook event types the console's dossier lists for the order a fresh App Store purchase made.
    static func webhookTypes(extra: [String: String]) async throws -> [String] {
        let types = Mutex<[String]>([])
        try await TestServer.withComponents(extra: extra) { client, components, _ in
            let alice = try await TestServer.token("alice")
            let (_, jws) = try await components.sandbox!.appStore.purchase(productID: AppStoreFlowTests.coins)
            let result = try await AppStoreFlowTests.submit(client, token: alice, jws: jws)
            let order = try #require(result.order)
            #expect(result.verdict == .recorded && order.status == .fulfilled)
            struct Detail: Decodable {
                struct Webhook: Decodable { var type: String }
                var webhooks: [Webhook]
            }
            let detail = try await client.execute(
                uri: "/v1/admin/orders/\(order.orderNo)", method: .get,
                headers: TestServer.bearer(TestServer.adminKey)
            ).decoded(Detail.self)
            types.withLock { $0 = detail.webhooks.map(\.type) }
        }
        return types.withLock { $0 }
    }

    @Test("no endpoint configured: a fresh submission keeps no webhook event")
    func noEndpoint() async throws {
        #expect(try await Self.webhookTypes(extra: [:]) == [])
    }

    @Test("an endpoint configured: the submission's order announces each state it went through")
    func endpoint() async throws {
        let types = try await Self.webhookTypes(extra: TestServer.webhookEndpoint)
        #expect(types.count == 3 && types.last == "order.fulfilled", "\(types)")
    }

    @Test(
        "an endpoint that refuses connections (a merchant's server restarting): each attempt fails at once and waits its backoff, instead of its 10-second timeout"
    )
    func endpointRefusing() async throws {
        let closed = try TestServer.freePort()
        let extra = [
            "ORDERSAFE_WEBHOOKS_URL": "http://127.0.0.1:\(closed)/webhooks",
            "ORDERSAFE_WEBHOOKS_SECRET": TestServer.webhookEndpoint["ORDERSAFE_WEBHOOKS_SECRET"]!,
        ]
        try await TestServer.withComponents(extra: extra) { client, components, _ in
            let alice = try await TestServer.token("alice")
            let (_, jws) = try await components.sandbox!.appStore.purchase(productID: AppStoreFlowTests.coins)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
            let dispatcher = try #require(components.webhooks)
            let started = ContinuousClock.now
            let pass = try await dispatcher.deliverDue()
            let took = ContinuousClock.now - started
            #expect(pass == (0, 3), "the order's three events, each tried once")
            // A connection tried again until the attempt's deadline makes three attempts take 30 s at least; three
            // that fail at once take milliseconds alone, and under the whole suite's load once 9.4 s.
            #expect(took < .seconds(20), "three refused connections took \(took)")
        }
    }
}
