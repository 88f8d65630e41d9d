import Alipay
import ChannelSupport
import Engine
import Foundation
import Hummingbird
import Ledger
import Logging
import OrderSafeModel
import Prometheus
import ServiceLifecycle
import WeChatPay

/// Wiring in one place: database, migrations, catalog, authentication, routes and middleware.
public enum OrderSafeApplication {
    /// Builds the server: migrates the database, activates the catalog, and returns the application ready to run.
    public static func build(
        settings: Settings,
        clock: any WallClock = SystemClock(),
        random: @escaping @Sendable () -> UInt64 = { UInt64.random(in: .min ... .max) },
        logger: Logger
    ) async throws -> some ApplicationProtocol {
        let (router, database, runner, webhooks) = try await makeRouter(settings: settings, clock: clock, random: random, logger: logger)
        var services: [any Service] = [DatabaseService(database: database)]
        if settings.reconcile.intervalSeconds > 0 {
            services.append(PeriodicWorkService(name: "reconciliation", interval: .seconds(settings.reconcile.intervalSeconds), logger: logger) {
                let tally = try await runner.runDue()
                return tally.total == 0 ? nil : "done \(tally.done), rescheduled \(tally.rescheduled), fenced off \(tally.fencedOff)"
            })
        }
        if let webhooks {
            services.append(PeriodicWorkService(name: "webhooks", interval: .seconds(1), logger: logger) {
                let (delivered, failed) = try await webhooks.deliverDue()
                return delivered + failed == 0 ? nil : "delivered \(delivered), failed \(failed)"
            })
        }
        return Application(
            router: router,
            configuration: .init(address: .hostname(settings.server.host, port: settings.server.port), serverName: "OrderSafe"),
            services: services,
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.server.port
                logger.notice("OrderSafe is listening on http://\(settings.server.host):\(port)")
            },
            logger: logger)
    }

    /// Runs one reconciliation pass by hand (`ordersafe reconcile`): every job due now, with the providers this
    /// configuration has; `progress` hears (finished, due at the start) after each job.
    public static func reconcileOnce(
        settings: Settings, logger: Logger, progress: @escaping @Sendable (Int, Int) -> Void
    ) async throws -> (tally: JobRunner.Tally, later: Int) {
        let (_, database, runner, _) = try await makeRouter(
            settings: settings, clock: SystemClock(), random: { UInt64.random(in: .min ... .max) }, logger: logger)
        do {
            let ledger = SQLLedger(database: database)
            let due = try await ledger.pendingJobs(now: Date()).due
            let tally = try await runner.runDue { tally in progress(tally.total, due) }
            let later = try await ledger.pendingJobs(now: Date()).later
            try await database.shutdown()
            return (tally, later)
        } catch {
            try? await database.shutdown()
            throw error
        }
    }

    /// The router with every route and middleware, the database it uses, the job runner of this process, and the
    /// webhook dispatcher when the merchant configured a backend. Replicas in one process (tests) may share `sandbox`.
    static func makeRouter(
        settings: Settings, clock: any WallClock, random: @escaping @Sendable () -> UInt64, logger: Logger,
        sandbox shared: SandboxProviders? = nil
    ) async throws -> (Router<OrderSafeRequestContext>, LedgerDatabase, JobRunner, WebhookDispatcher?) {
        let database = try LedgerDatabase(url: settings.database.url, maxConnectionsPerEventLoop: settings.database.poolSize, logger: logger)
        do {
            try await Migrator(database: database, logger: logger).migrate(now: clock.now())
            let ledger = SQLLedger(database: database)
            let catalog = try await ActiveCatalog.activate(try CatalogLoader.load(settings.catalog), in: ledger, at: clock.now())
            logger.info("catalog active", metadata: ["version": "\(catalog.catalog.version)", "products": "\(catalog.catalog.products.count)"])

            let jwtSecret = try DevelopmentCredentials.resolve(
                configured: settings.auth.jwtSecret, name: "dev-jwt-secret", settings: settings.server)
            let adminKey = try DevelopmentCredentials.resolve(
                configured: settings.auth.adminKey.isEmpty ? nil : settings.auth.adminKey, name: "dev-admin-key",
                settings: settings.server) ?? ""
            let userAuth = try await UserAuthenticator(auth: settings.auth, hs256Secret: jwtSecret, clock: clock)
            let sandbox = settings.server.environment == .sandbox && (settings.alipay == nil || settings.wechatpay == nil || settings.appStore == nil)
                ? try shared ?? SandboxProviders(settings: settings.server, clock: clock, logger: logger) : nil
            let alipay = try (settings.alipay ?? sandbox?.alipaySettings).map { alipay in
                let credentials = try alipay.credentials()
                return AlipayPayments(
                    credentials: credentials,
                    gateway: AlipayGatewayClient(
                        credentials: credentials, gatewayURL: alipay.gatewayURL,
                        transport: HTTPClientAlipayTransport(
                            transport: settings.alipay == nil ? sandbox!.alipay.transport : HTTPClientProviderTransport(maxResponseBytes: 1 << 20)),
                        clock: clock, logger: logger),
                    sellerID: alipay.sellerID, notifyURL: alipay.notifyURL, ledger: ledger, catalog: catalog, clock: clock, logger: logger)
            }
            let wechatpay = try (settings.wechatpay ?? sandbox?.wechatpaySettings).map { wechatpay in
                try wechatpay.payments(
                    transport: settings.wechatpay == nil ? sandbox!.wechatpayTransport : HTTPClientProviderTransport(),
                    ledger: ledger, catalog: catalog, clock: clock, logger: logger)
            }
            let identities = OrderIdentityGenerator(clock: clock, random: random)
            let appStore = try (settings.appStore ?? sandbox?.appStoreSettings).map { appStore in
                try appStore.payments(ledger: ledger, catalog: catalog, identities: identities, clock: clock, logger: logger)
            }
            var channels: Set<Channel> = [.appStore]
            var settlers: [Channel: any OrderSettler] = [:]
            if let alipay {
                channels.insert(.alipay)
                settlers[.alipay] = alipay
            }
            if let wechatpay {
                channels.insert(.wechatPay)
                settlers[.wechatPay] = wechatpay
            }
            let reconciler = Reconciler(ledger: ledger, settlers: settlers, clock: clock, logger: logger)
            let runner = JobRunner(ledger: ledger, reconciler: reconciler, clock: clock, logger: logger, owner: JobRunner.processOwner)

            let router = Router(context: OrderSafeRequestContext.self)
            router.add(middleware: RequestIDMiddleware())
            router.add(middleware: LogRequestsMiddleware(.info))
            router.add(middleware: MetricsMiddleware())
            router.add(middleware: ErrorEnvelopeMiddleware())
            OperationsController(
                database: database, ledger: ledger, registry: MetricsBootstrap.registry,
                openAPIDocument: try CatalogLoader.bundledResource("openapi", ext: "json")
            ).addRoutes(to: router)
            let v1 = router.group("v1")
            CatalogController(catalog: catalog).addRoutes(to: v1)
            let users = v1.group().add(middleware: UserAuthMiddleware(authenticator: userAuth))
            OrdersController(
                orders: OrderService(
                    ledger: ledger, catalog: catalog, identities: identities, clock: clock,
                    availableChannels: channels, firstQueryAfter: TimeInterval(settings.reconcile.firstQuerySeconds)),
                alipay: alipay, wechatpay: wechatpay, reconciler: reconciler, maxBodyBytes: settings.server.maxBodyBytes
            ).addRoutes(to: users)
            NotificationsController(alipay: alipay, wechatpay: wechatpay, appStore: appStore).addRoutes(to: v1)
            if let appStore { AppStoreController(payments: appStore).addRoutes(to: users) }
            sandbox?.addRoutes(to: router)
            HoldingsController(ledger: ledger, clock: clock).addRoutes(to: users)
            var refunders: [Channel: any OrderRefunder] = [:]
            refunders[.alipay] = alipay
            refunders[.wechatPay] = wechatpay
            AdminController(ledger: ledger, refunds: RefundService(ledger: ledger, refunders: refunders, clock: clock)).addRoutes(
                to: v1.group("admin").add(middleware: AdminAuthMiddleware(authenticator: AdminAuthenticator(adminKey: adminKey))))

            let webhooks = settings.webhooks.map { webhooks in
                WebhookDispatcher(
                    ledger: ledger, url: webhooks.url, secret: webhooks.secret, transport: HTTPClientProviderTransport(maxResponseBytes: 64 << 10),
                    clock: clock, logger: logger)
            }
            return (router, database, runner, webhooks)
        } catch {
            try? await database.shutdown()
            throw error
        }
    }
}
