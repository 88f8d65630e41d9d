import Alipay
import ChannelSupport
import Engine
import Foundation
import Ledger
import Logging
import OrderSafeModel

/// Every part of a server, wired in one place from its settings: the ledger, the catalog, the channels (real
/// accounts, or the built-in sandboxes), the order engine's services and the background workers. The HTTP routes,
/// `ordersafe reconcile` and `ordersafe demo` are all built on it.
struct OrderSafeComponents: Sendable {
    let database: LedgerDatabase
    let ledger: SQLLedger
    let catalog: ActiveCatalog
    let clock: any WallClock
    let orders: OrderService
    let alipay: AlipayPayments?
    let wechatpay: WeChatPayPayments?
    let appStore: AppStorePayments?
    let reconciler: Reconciler
    let runner: JobRunner
    let refunds: RefundService
    let webhooks: WebhookDispatcher?
    /// The built-in providers, when the sandbox runs on them.
    let sandbox: SandboxProviders?

    /// Builds the components, runs `body` with them, and closes the database however `body` ends (one-shot
    /// commands: `ordersafe reconcile`, `ordersafe demo`; the server closes it as a service of its group instead).
    static func with<R: Sendable>(
        settings: Settings, clock: any WallClock, random: @escaping @Sendable () -> UInt64, logger: Logger,
        sandbox: SandboxProviders? = nil, _ body: (OrderSafeComponents) async throws -> R
    ) async throws -> R {
        let components = try await build(
            settings: settings, clock: clock, random: random, logger: logger, sandbox: sandbox)
        let result: R
        do {
            result = try await body(components)
        } catch {
            try? await components.database.shutdown()
            throw error
        }
        try await components.database.shutdown()
        return result
    }

    /// Migrates the database, activates the catalog and wires the rest. Replicas in one process (tests) may share
    /// one `sandbox`.
    static func build(
        settings: Settings, clock: any WallClock, random: @escaping @Sendable () -> UInt64, logger: Logger,
        sandbox shared: SandboxProviders? = nil
    ) async throws -> OrderSafeComponents {
        let database = try LedgerDatabase(
            url: settings.database.url, maxConnectionsPerEventLoop: settings.database.poolSize, logger: logger)
        do {
            try await Migrator(database: database, logger: logger).migrate(now: clock.now())
            let ledger = SQLLedger(database: database)
            let catalog = try await ActiveCatalog.activate(
                try CatalogLoader.load(settings.catalog), in: ledger, at: clock.now())
            logger.info(
                "catalog active",
                metadata: ["version": "\(catalog.catalog.version)", "products": "\(catalog.catalog.products.count)"])
            if settings.server.environment == .production {
                try ChannelAccounts.check(
                    catalog.catalog,
                    configured: Set(
                        [
                            settings.appStore.map { _ in .appStore }, settings.alipay.map { _ in .alipay },
                            settings.wechatpay.map { _ in .wechatPay },
                        ]
                        .compactMap { $0 }))
            }

            let needsSandbox = settings.alipay == nil || settings.wechatpay == nil || settings.appStore == nil
            let sandbox =
                settings.server.environment == .sandbox && needsSandbox
                ? try shared ?? SandboxProviders(settings: settings.server, clock: clock, logger: logger) : nil
            await sandbox?.resume()
            let context = EngineContext(ledger: ledger, catalog: catalog, clock: clock, logger: logger)
            let alipay = try (settings.alipay ?? sandbox?.alipaySettings).map { alipay in
                let credentials = try alipay.credentials()
                return AlipayPayments(
                    credentials: credentials,
                    gateway: AlipayGatewayClient(
                        credentials: credentials, gatewayURL: alipay.gatewayURL,
                        transport: HTTPClientAlipayTransport(
                            transport: settings.alipay == nil
                                ? sandbox!.alipay.transport : HTTPClientProviderTransport(maxResponseBytes: 1 << 20)),
                        clock: clock, logger: logger),
                    sellerID: alipay.sellerID, notifyURL: alipay.notifyURL, context: context,
                    sandbox: settings.alipay == nil || alipay.isAlipaySandbox)
            }
            let wechatpay = try (settings.wechatpay ?? sandbox?.wechatpaySettings).map { wechatpay in
                try wechatpay.payments(
                    transport: settings.wechatpay == nil ? sandbox!.wechatpayTransport : HTTPClientProviderTransport(),
                    context: context,
                    sandbox: settings.wechatpay == nil)
            }
            let identities = OrderIdentityGenerator(clock: clock, random: random)
            var appStore: AppStorePayments?
            if let appStoreSettings = settings.appStore ?? sandbox?.appStoreSettings {
                appStore = try await appStoreSettings.payments(
                    transport: settings.appStore == nil ? sandbox!.appStore.transport : HTTPClientProviderTransport(),
                    identities: identities, context: context)
            }

            var channels: Set<Channel> = appStore == nil ? [] : [.appStore]
            var settlers: [Channel: any OrderSettler] = [:]
            var refunders: [Channel: any OrderRefunder] = [:]
            var replayers: [Channel: any NotificationReplayer] = [:]
            replayers[.appStore] = appStore
            if let alipay {
                channels.insert(.alipay)
                settlers[.alipay] = alipay
                refunders[.alipay] = alipay
                replayers[.alipay] = alipay
            }
            if let wechatpay {
                channels.insert(.wechatPay)
                settlers[.wechatPay] = wechatpay
                refunders[.wechatPay] = wechatpay
            }
            let reconciler = Reconciler(
                ledger: ledger, settlers: settlers, replayers: replayers, appStore: appStore, clock: clock,
                logger: logger)
            try await reconciler.scheduleRecurring()
            return OrderSafeComponents(
                database: database, ledger: ledger, catalog: catalog, clock: clock,
                orders: OrderService(
                    ledger: ledger, catalog: catalog, identities: identities, clock: clock, availableChannels: channels,
                    firstQueryAfter: TimeInterval(settings.reconcile.firstQuerySeconds),
                    unpaidOrderLimit: settings.limits.unpaidOrdersPerUser),
                alipay: alipay, wechatpay: wechatpay, appStore: appStore, reconciler: reconciler,
                runner: JobRunner(
                    ledger: ledger, reconciler: reconciler, clock: clock, logger: logger, owner: JobRunner.processOwner),
                refunds: RefundService(ledger: ledger, refunders: refunders, clock: clock),
                webhooks: settings.webhooks.map { webhooks in
                    WebhookDispatcher(
                        ledger: ledger, url: webhooks.url, secret: webhooks.secret,
                        transport: HTTPClientProviderTransport(maxResponseBytes: 64 << 10), clock: clock, logger: logger
                    )
                },
                sandbox: sandbox)
        } catch {
            try? await database.shutdown()
            throw error
        }
    }
}
