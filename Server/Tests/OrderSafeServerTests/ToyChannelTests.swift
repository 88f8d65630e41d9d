import ChannelSupport
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Testing

@testable import Engine
@testable import OrderSafeServer

/// A fourth channel added the way the README's "Adding a payment channel" says, with nothing else of the server
/// edited: its payments over the ledger roles it takes (notifications verified, then kept with what they record in
/// one write), its `PaymentChannel` (settings section, notification route, label), its simulator, and its line in the
/// registry (here ``ChannelRegistry/adding(_:)``, as a channel built outside the server's module is registered). No
/// migration: a channel column admits any channel's name. The server then sells through it, records its payment once
/// however often the provider says so, refuses a forged notification, and checks its settings.
@Suite("A toy fourth channel, added through the README's list")
struct ToyChannelTests {
    static let registry = try! ChannelRegistry.builtIn.adding(ToyChannel.self)

    /// Settings of a server built with the toy channel, selling `toy_gem` through it; `secret` sets its account.
    static func settings(secret: String?, environment: String = "sandbox") async throws -> Settings {
        let catalog = FileManager.default.temporaryDirectory.appendingPathComponent("toy-\(UUID().uuidString).json")
        try Data(
            #"""
            {"version": "toy-1", "products": [{"id": "toy_gem", "kind": "consumable", "title": "Gem", "goods": "service",
             "channels": ["toy"], "prices": {"toy": {"amount_minor": 600, "currency": "CNY"}},
             "grants": [{"type": "add_balance", "balance": "gems", "amount": 1}]}]}
            """#.utf8
        ).write(to: catalog)
        var environmentValues = [
            "ORDERSAFE_DATABASE_URL": "sqlite::memory:", "ORDERSAFE_AUTH_JWT_SECRET": TestServer.jwtSecret,
            "ORDERSAFE_AUTH_ADMIN_KEY": TestServer.adminKey, "ORDERSAFE_CATALOG_FILE": catalog.path,
            "ORDERSAFE_SERVER_DATA_DIR": FileManager.default.temporaryDirectory
                .appendingPathComponent("ordersafe-toy-\(UUID().uuidString)").path,
            "ORDERSAFE_SERVER_ENVIRONMENT": environment,
            "ORDERSAFE_LIMITS_PER_ADDRESS_PER_MINUTE": "0", "ORDERSAFE_LIMITS_PER_USER_PER_MINUTE": "0",
        ]
        if let secret { environmentValues["ORDERSAFE_TOY_SECRET"] = secret }
        return try await SettingsLoader.load(environment: environmentValues, registry: registry)
    }

    @Test("the server sells through the toy channel and records its payment once, whatever the provider repeats")
    func sellsThroughIt() async throws {
        let settings = try await Self.settings(secret: nil)  // no account: the toy's simulator stands in
        #expect(settings.channels[ToyChannel.channel] == nil)
        let (router, components) = try await OrderSafeApplication.makeRouter(
            settings: settings, clock: FixedClock(date: TestServer.now), random: { UInt64.random(in: .min ... .max) },
            logger: TestLog.logger)
        #expect(components.channels.names.contains(ToyChannel.channel))
        let secret = try #require(components.sandbox?.simulator(ToySimulator.self)).account.secret
        let alice = try await TestServer.token("alice")
        try await Application(router: router, logger: TestLog.logger).test(.router) { client in
            let created = try await TestServer.createOrder(client, token: alice, product: "toy_gem", channel: "toy")
            #expect(created.status == .created)
            let order = try created.decoded(OrderResponse.self).order
            #expect(order.channel == ToyChannel.channel && order.amount == Money(amountMinor: 600, currency: .cny))

            let paid = ToyNotification(orderNo: order.orderNo, paymentID: "toy-pay-1", amountMinor: 600)
            // Forged: refused, nothing recorded.
            #expect(try await Self.notify(client, paid, secret: "not the secret") == .unauthorized)
            #expect(try await Self.show(client, order.orderNo, alice).order.status == .created)
            // Sent three times, as a provider retries: recorded once.
            for _ in 0..<3 { #expect(try await Self.notify(client, paid, secret: secret) == .ok) }
            let shown = try await Self.show(client, order.orderNo, alice)
            #expect(shown.order.status == .fulfilled)
            #expect(shown.providerTransactionID == "toy-pay-1")
            let holdings = try await components.ledger.holdings(userID: "alice", at: TestServer.now)
            #expect(holdings.balances.map { "\($0.name)=\($0.amount)" } == ["gems=1"])
            let verdicts = try await components.database.withSession { db in
                try await db.raw("SELECT verdict FROM inbox WHERE channel = 'toy'").all().map {
                    try $0.decode(column: "verdict", as: String.self)
                }
            }
            // One entry: the forged bytes were refused, the genuine copy reopened them, the repeats found them applied.
            #expect(verdicts == ["applied"])
        }
        try await components.database.shutdown()
    }

    @Test("the toy channel's settings section is read, and production refuses its catalog without its account")
    func settingsAndProduction() async throws {
        let configured = try await Self.settings(secret: "toy-secret-0123456789")
        #expect((configured.channels[ToyChannel.channel] as? ToyAccount)?.secret == "toy-secret-0123456789")
        await #expect(throws: SettingsError.self) { try await Self.settings(secret: "short") }

        let production = try await Self.settings(secret: nil, environment: "production")
        let error = await #expect(throws: SettingsError.self) {
            _ = try await OrderSafeComponents.build(
                settings: production, clock: FixedClock(date: TestServer.now), random: { 7 }, logger: TestLog.logger)
        }
        #expect(error?.key == "toy.secret")
        // The server without the toy registered refuses the catalog naming it, before anything runs.
        var unregistered = production
        unregistered.registry = .builtIn
        let unknown = await #expect(throws: SettingsError.self) {
            _ = try await OrderSafeComponents.build(
                settings: unregistered, clock: FixedClock(date: TestServer.now), random: { 7 },
                logger: TestLog.logger)
        }
        #expect(unknown?.key == "catalog.file")
        #expect(unknown?.reason.contains("'toy' ('toy_gem')") == true)
    }

    static func notify(_ client: some TestClientProtocol, _ notification: ToyNotification, secret: String) async throws
        -> HTTPResponse.Status
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys  // the same bytes each time, as a provider's retry sends
        let body = try encoder.encode(notification)
        let signature = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
        return try await client.execute(
            uri: "/v1/notify/toy", method: .post,
            headers: [
                .contentType: "application/json",
                HTTPField.Name("X-Toy-Signature")!: Data(signature).map { String(format: "%02x", $0) }.joined(),
            ],
            body: ByteBuffer(data: body)
        ).status
    }

    static func show(_ client: some TestClientProtocol, _ orderNo: String, _ token: String) async throws
        -> OrderResponse
    {
        try await client.execute(uri: "/v1/orders/\(orderNo)", method: .get, headers: TestServer.bearer(token))
            .decoded(OrderResponse.self)
    }
}

// MARK: - The toy channel, as its folders would hold it

/// What the toy provider posts to `/v1/notify/toy`, HMAC-SHA256 signed in `X-Toy-Signature` (hex).
struct ToyNotification: Codable, Sendable {
    var orderNo: String
    var paymentID: String
    var amountMinor: Int64
}

/// `Engine/Toy/`: the toy's payments over the ledger roles it takes.
struct ToyPayments: Sendable {
    let secret: String
    let context: EngineContext<any LedgerTransactions & LedgerWrite>
    let sandbox: Bool

    /// Verified, then kept with what it records in one write (`Inbox.notification`); nil when accepted.
    func handle(body: [UInt8], headers: [String: String]) async throws -> Refusal? {
        try await Inbox(context: context.narrowed { $0 }).notification(
            ToyChannel.channel, headers: headers, body: body,
            verify: {
                let code = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
                guard headers["x-toy-signature"] == Data(code).map({ String(format: "%02x", $0) }).joined(),
                    let notification = try? JSONDecoder().decode(ToyNotification.self, from: Data(body))
                else { throw Refusal(status: 401, message: "not signed by the toy provider", unauthenticated: true) }
                return notification
            },
            apply: { [context, sandbox] (notification: ToyNotification, inboxID: Int64, write: any LedgerWrite) in
                guard let order = try await write.order(number: notification.orderNo) else {
                    throw Refusal(status: 404, message: "no order \(notification.orderNo)")
                }
                _ = try await write.fulfil(
                    VerifiedPayment(
                        channel: ToyChannel.channel, providerTransactionID: notification.paymentID,
                        orderNo: order.orderNo, amount: Money(amountMinor: notification.amountMinor, currency: .cny),
                        cause: .notification, evidence: "inbox:\(inboxID)", sandbox: sandbox),
                    at: context.clock.now())
                return nil
            })
    }
}

/// `Channels/Toy/Settings+Toy.swift`: its settings section, `toy.secret`.
struct ToyAccount: ChannelSettings {
    var secret: String
}

/// `Channels/Toy/ToySimulator.swift`: the provider's stand-in, with its secret kept in the sandbox folder.
struct ToySimulator: ChannelSimulator {
    let account: ToyAccount

    init(_ setup: SimulatorSetup) throws {
        account = ToyAccount(secret: try setup.secret("toy-secret.txt"))
    }

    var transport: any ProviderTransport { ToyUnreachable() }
    func resume() async {}
    func addRoutes(to router: Router<OrderSafeRequestContext>, catalog: Catalog) async {}
}

/// The toy provider has no API to call.
struct ToyUnreachable: ProviderTransport {
    func send(method: String, url: String, headers: [String: String], body: [UInt8], timeout: Duration) async throws
        -> ProviderHTTPResponse
    {
        ProviderHTTPResponse(status: 404, headers: [:], body: [])
    }
}

/// `Channels/Toy/ToyChannel.swift`: the `PaymentChannel`.
struct ToyChannel: PaymentChannel {
    typealias Simulator = ToySimulator

    let payments: ToyPayments

    static let channel = Channel(rawValue: "toy")!
    static let accountKey = "toy.secret"
    static let label = ChannelLabel(english: "Toy", simplifiedChinese: "玩具", colour: "#ff8800")
    static let notificationRoute = "notify/toy"
    static let userRoutePrefix: String? = nil
    static let reservedIdempotencyPrefix: String? = nil

    static func account(from reader: SettingsReader) throws -> ToyAccount? {
        guard let secret = try reader.secret("toy.secret") else { return nil }
        guard secret.utf8.count >= 16 else {
            throw SettingsError(key: "toy.secret", reason: "must be at least 16 characters")
        }
        return ToyAccount(secret: secret)
    }

    static func start(account: ToyAccount, transport: any ProviderTransport, simulated: Bool, wiring: ChannelWiring)
        async throws -> ToyChannel
    {
        ToyChannel(
            payments: ToyPayments(secret: account.secret, context: wiring.context.narrowed { $0 }, sandbox: simulated))
    }

    var settler: (any OrderSettler)? { nil }
    var refunder: (any OrderRefunder)? { nil }
    var replayer: (any NotificationReplayer)? { nil }
    var chores: [any ChannelChore] { [] }
    var tasks: [any ChannelTask] { [] }
    var statements: (any StatementSource)? { nil }

    func invoke(_ order: Order, into response: inout OrderResponse) async throws {}

    func addRoutes(notifications: RouterGroup<OrderSafeRequestContext>, users: RouterGroup<OrderSafeRequestContext>) {
        notifications.post(RouterPath(Self.notificationRoute)) { request, context in
            let body = try await request.body.collect(upTo: 4096)
            let headers = ProviderNotification.keptHeaders(request, ["x-toy-signature"]) ?? [:]
            let refusal = try await payments.handle(body: Array(buffer: body), headers: headers)
            return ProviderNotification.text(
                refusal?.message ?? "OK", status: HTTPResponse.Status(code: refusal?.status ?? 200))
        }
    }
}
