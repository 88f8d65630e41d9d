import Engine
import Foundation
import Hummingbird
import Ledger
import Logging
import NIOCore
import OrderSafeModel
import Prometheus
import ServiceLifecycle

/// The server: ``OrderSafeComponents`` behind the HTTP routes and middleware, with the background workers.
public enum OrderSafeApplication {
    /// Builds the server: migrates the database, activates the catalog, and returns the application ready to run.
    public static func build(
        settings: Settings,
        clock: any WallClock = SystemClock(),
        random: @escaping @Sendable () -> UInt64 = { UInt64.random(in: .min ... .max) },
        logger: Logger
    ) async throws -> some ApplicationProtocol {
        let (router, components) = try await makeRouter(
            settings: settings, clock: clock, random: random, logger: logger)
        let runner = components.runner
        if components.sandbox != nil {
            logger.warning(
                """
                SANDBOX MODE: the built-in provider simulators under /sandbox mint purchases this server trusts. \
                Never expose this server to users; run production with server.environment=production.
                """,
                metadata: [
                    "host": "\(settings.server.host)",
                    "public_sandbox_allowed": "\(settings.server.allowsPublicSandbox)",
                ])
        }
        var services: [any Service] = [DatabaseService(database: components.database)]
        if settings.reconcile.intervalSeconds > 0 {
            // Two lanes: a day's statement (minutes of work for a large merchant) never delays an order's query.
            let lanes = [
                ("reconciliation", runner.on(.except([.statements]))),
                ("statements", runner.on(.only([.statements]), lease: StatementChore.lease)),
            ]
            for (name, lane) in lanes {
                services.append(
                    PeriodicWorkService(
                        name: name, interval: .seconds(settings.reconcile.intervalSeconds), logger: logger
                    ) {
                        let tally = try await lane.runDue()
                        return tally.total == 0
                            ? nil
                            : "done \(tally.done), rescheduled \(tally.rescheduled), fenced off \(tally.fencedOff)"
                    })
            }
        }
        if let webhooks = components.webhooks {
            services.append(
                PeriodicWorkService(name: "webhooks", interval: .seconds(1), logger: logger) {
                    let (delivered, failed) = try await webhooks.deliverDue()
                    return delivered + failed == 0 ? nil : "delivered \(delivered), failed \(failed)"
                })
        }
        if let sandbox = components.sandbox {
            services += await sandbox.services(logger: logger)
        }
        if let backups = components.backups {
            services.append(
                PeriodicWorkService(
                    name: "backup", interval: .seconds(min(backups.settings.everySeconds, 60)), logger: logger
                ) { try await backups.runDue() })
        }
        let headTimeout = TimeAmount.seconds(Int64(settings.server.idleTimeoutSeconds))
        // Behind a trusted proxy every connection comes from the proxy: it caps its clients' connections itself.
        let connections = ConnectionLimiter(
            perAddress: settings.server.trustForwardedFor ? 0 : settings.server.maxConnectionsPerAddress,
            total: FileDescriptorLimit.connections(configured: settings.server.maxConnections))
        return Application(
            router: router,
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [
                        ConnectionStateHandler(
                            timeout: headTimeout, bodyTimeout: .seconds(Int64(settings.server.requestTimeoutSeconds)),
                            limiter: connections)
                    ],
                    idleTimeout: headTimeout)),
            configuration: .init(
                address: .hostname(settings.server.host, port: settings.server.port), serverName: "OrderSafe"),
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
        try await OrderSafeComponents.with(
            settings: settings, clock: SystemClock(), random: { UInt64.random(in: .min ... .max) }, logger: logger
        ) { components in
            let due = try await components.ledger.pendingJobs(now: Date()).due
            let tally = try await components.runner.runDue { tally in progress(tally.total, due) }
            return (tally, try await components.ledger.pendingJobs(now: Date()).later)
        }
    }

    /// Reconciles one day's statements of `channels` (every channel whose provider publishes one when empty), one
    /// after another; `progress` is told the channel, the lines checked and the lines to check.
    public static func reconcileStatements(
        settings: Settings, day: StatementDay, channels: [OrderSafeModel.Channel], logger: Logger,
        progress: @escaping @Sendable (OrderSafeModel.Channel, Int, Int) -> Void
    ) async throws -> [StatementReport] {
        try await OrderSafeComponents.with(
            settings: settings, clock: SystemClock(), random: { UInt64.random(in: .min ... .max) }, logger: logger
        ) { components in
            let reconciler = components.statements
            for channel in channels where !reconciler.channels.contains(channel) {
                throw StatementError.noStatements(channel)
            }
            var reports: [StatementReport] = []
            for channel in channels.isEmpty ? reconciler.channels : channels {
                reports.append(
                    try await reconciler.reconcile(channel, day: day) { done, total in progress(channel, done, total) })
            }
            return reports
        }
    }

    /// The router with every route and middleware over `components`.
    static func makeRouter(settings: Settings, components: OrderSafeComponents) async throws -> Router<
        OrderSafeRequestContext
    > {
        let clock = components.clock
        let jwtSecret = try DevelopmentCredentials.resolve(
            configured: settings.auth.jwtSecret, name: "dev-jwt-secret", settings: settings.server)
        let adminKey =
            try DevelopmentCredentials.resolve(
                configured: settings.auth.adminKey.isEmpty ? nil : settings.auth.adminKey, name: "dev-admin-key",
                settings: settings.server) ?? ""
        let userAuth = try await UserAuthenticator(auth: settings.auth, hs256Secret: jwtSecret, clock: clock)

        let router = Router(context: OrderSafeRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: LogRequestsMiddleware(.info))
        router.add(middleware: RequestMetricsMiddleware())
        router.add(middleware: ErrorEnvelopeMiddleware())
        let openAPIDocument = try CatalogLoader.bundledResource("openapi", ext: "json")
        let off = settings.registry.all.filter { components.channels[$0.channel] == nil }
        let unmounted =
            (components.sandbox == nil ? ["/sandbox/"] : [])
            + off.flatMap { ["/v1/\($0.notificationRoute)"] + ($0.userRoutePrefix.map { [$0] } ?? []) }
        router.add(
            middleware: MethodNotAllowedMiddleware(
                routes: try RouteTable(openAPIDocument: openAPIDocument, unmounted: unmounted)))
        if settings.server.trustForwardedFor { router.add(middleware: ForwardedForMiddleware()) }
        let addresses =
            settings.limits.perAddressPerMinute > 0
            ? RateLimiter(perMinute: settings.limits.perAddressPerMinute, clock: clock) : nil
        let userRoutes = UserRoutes(registry: settings.registry)
        if let addresses {
            router.add(middleware: RateLimitMiddleware(limiter: addresses, key: .address, userRoutes: userRoutes))
        }
        OperationsController(
            database: components.database, ledger: components.ledger, registry: MetricsBootstrap.registry,
            openAPIDocument: try OpenAPIDocument.mounted(openAPIDocument, unmounted: unmounted)
        ).addRoutes(to: router)
        let v1 = router.group("v1")
        let userAuthentication = UserAuthMiddleware(
            authenticator: userAuth, addresses: addresses, userRoutes: userRoutes)
        let users = v1.group().add(middleware: userAuthentication)
        let subscriptions = Subscriptions(book: components.ledger, catalog: components.catalog, clock: clock)
        CatalogController(
            catalog: components.catalog, users: userAuthentication, subscriptions: subscriptions,
            channels: components.channels.all
        ).addRoutes(to: v1)
        if settings.limits.perUserPerMinute > 0 {
            users.add(
                middleware: RateLimitMiddleware(
                    limiter: RateLimiter(perMinute: settings.limits.perUserPerMinute, clock: clock), key: .user,
                    userRoutes: userRoutes))
        }
        OrdersController(
            orders: components.orders, channels: components.channels, reconciler: components.reconciler,
            maxBodyBytes: settings.server.maxBodyBytes
        ).addRoutes(to: users)
        for channel in components.channels.all { channel.addRoutes(notifications: v1, users: users) }
        if let sandbox = components.sandbox {
            var tokens: DevelopmentTokenIssuer?
            if settings.auth.jwtAlgorithm == .hs256, let jwtSecret {
                tokens = await DevelopmentTokenIssuer(secret: jwtSecret)
            }
            await sandbox.addRoutes(to: router, catalog: components.catalog.catalog, tokens: tokens, clock: clock)
        }
        HoldingsController(ledger: components.ledger, subscriptions: subscriptions, clock: clock).addRoutes(to: users)
        SubscriptionsController(subscriptions: subscriptions).addRoutes(to: users)
        OrderHistoryController(ledger: components.ledger).addRoutes(to: users)
        let operatorKeys = OperatorKeys(adminKey: adminKey, operatorKeys: settings.console.operatorKeys)
        // Wrong operator keys, from the console's sign-in or the admin API, spend one budget per address.
        let wrongKeys = RateLimiter(
            perMinute: settings.console.signInAttemptsPerMinute, burst: settings.console.signInAttemptsPerMinute,
            clock: clock)
        let desk = OperatorDesk(
            ledger: components.ledger, refunds: components.refunds, reconciler: components.reconciler,
            statements: components.statements,
            channels: settings.registry.channels,
            heldChannels: settings.registry.all.filter { $0.holdsSignals }.map { $0.channel },
            heldReplayers: components.channels.heldReplayers, clock: clock)
        let admin = v1.group("admin").add(middleware: AdminAuthMiddleware(keys: operatorKeys, wrongKeys: wrongKeys))
        AdminController(ledger: components.ledger, desk: desk, subscriptions: subscriptions, clock: clock).addRoutes(
            to: admin)
        StatementsController(desk: desk).addRoutes(to: admin)
        ConsoleController(
            ledger: components.ledger, desk: desk, catalog: components.catalog, subscriptions: subscriptions,
            sessions: ConsoleSessions(
                ledger: components.ledger, clock: clock, idle: TimeInterval(settings.console.idleMinutes * 60),
                lifetime: TimeInterval(settings.console.sessionHours * 3600),
                secureCookie: settings.console.secureCookie),
            keys: operatorKeys, signInLimiter: wrongKeys,
            views: try ConsoleViews(), defaultZone: settings.console.defaultTimeZone, clock: clock,
            backups: components.backups, webhooksConfigured: components.webhooks != nil
        ).addRoutes(to: router)
        return router
    }

    /// Components and their router in one step (tests; replicas in one process may share `sandbox`).
    static func makeRouter(
        settings: Settings, clock: any WallClock, random: @escaping @Sendable () -> UInt64, logger: Logger,
        sandbox: SandboxProviders? = nil
    ) async throws -> (Router<OrderSafeRequestContext>, OrderSafeComponents) {
        let components = try await OrderSafeComponents.build(
            settings: settings, clock: clock, random: random, logger: logger, sandbox: sandbox)
        do {
            return (try await makeRouter(settings: settings, components: components), components)
        } catch {
            try? await components.database.shutdown()
            throw error
        }
    }
}
