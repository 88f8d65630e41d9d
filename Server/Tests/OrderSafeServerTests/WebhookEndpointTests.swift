import Foundation
import Hummingbird
import HummingbirdTesting
import OrderSafeModel
import Synchronization
import Testing

@testable import Engine
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
            // The wired dispatcher's transport, with each attempt's deadline far past what the whole suite's load
            // can cost: three attempts that fail at once take milliseconds alone and 9.4 s once under load, while a
            // connection tried again until its deadline makes the first attempt alone take 200 s.
            let wired = try #require(components.webhooks)
            let dispatcher = WebhookDispatcher(
                ledger: components.ledger, url: wired.url, secret: wired.secret, transport: wired.transport,
                clock: components.clock, logger: wired.logger, timeout: .seconds(200))
            let started = ContinuousClock.now
            let pass = try await dispatcher.deliverDue()
            let took = ContinuousClock.now - started
            #expect(pass == (0, 3), "the order's three events, each tried once")
            #expect(took < .seconds(190), "three refused connections took \(took)")
        }
    }
}
