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
    /// The channels this server takes payments through.
    let channels: RunningChannels
    let reconciler: Reconciler
    /// Checks each day's provider statements against the ledger.
    let statements: StatementReconciler
    let runner: JobRunner
    let refunds: RefundService
    let webhooks: WebhookDispatcher?
    /// The built-in providers, when the sandbox runs on them.
    let sandbox: SandboxProviders?
    /// Scheduled backups, for an SQLite ledger in a file with `backup.every_seconds` above 0.
    let backups: BackupSchedule?

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

    /// The backups `settings` schedule for `database`: none for PostgreSQL (base backups and WAL archiving, outside
    /// the server) or an in-memory ledger.
    static func backupSchedule(_ settings: Settings, database: LedgerDatabase, clock: any WallClock, logger: Logger)
        -> BackupSchedule?
    {
        guard let backup = settings.backup, backup.everySeconds > 0, case .sqliteFile = database.url else { return nil }
        return BackupSchedule(settings: backup, database: database, clock: clock, logger: logger)
    }

    /// Migrates the database, activates the catalog and wires the rest. Replicas in one process (tests) may share
    /// one `sandbox`.
    static func build(
        settings: Settings, clock: any WallClock, random: @escaping @Sendable () -> UInt64, logger: Logger,
        sandbox shared: SandboxProviders? = nil
    ) async throws -> OrderSafeComponents {
        let database = try LedgerDatabase(
            url: settings.database.url, maxConnectionsPerEventLoop: settings.database.poolSize,
            keepingWebhookEvents: settings.webhooks != nil, logger: logger)
        do {
            try await Migrator(database: database, logger: logger).migrate(now: clock.now())
            let ledger = SQLLedger(database: database)
            let loaded = try CatalogLoader.load(settings.catalog)
            try ChannelAccounts.checkRegistered(loaded, registry: settings.registry)
            let catalog = try await ActiveCatalog.activate(loaded, in: ledger, at: clock.now())
            logger.info(
                "catalog active",
                metadata: ["version": "\(catalog.catalog.version)", "products": "\(catalog.catalog.products.count)"])
            if settings.server.environment == .production {
                try ChannelAccounts.check(
                    catalog.catalog, configured: Set(settings.channels.keys), registry: settings.registry)
            }

            let needsSandbox = settings.registry.all.contains { settings.channels[$0.channel] == nil }
            let sandbox =
                settings.server.environment == .sandbox && needsSandbox
                ? try shared
                    ?? SandboxProviders(
                        settings: settings.server, registry: settings.registry, clock: clock, logger: logger) : nil
            try await sandbox?.resume()
            let recoveryKey = try DevelopmentCredentials.resolve(
                configured: settings.recoveryKey, name: "dev-recovery-key", settings: settings.server)
            let identities = OrderIdentityGenerator(
                clock: clock, random: random,
                accountTags: recoveryKey.flatMap { AccountTokenTag(key: Array($0.utf8)) })
            let channels = try await RunningChannels.start(
                settings: settings, sandbox: sandbox,
                wiring: ChannelWiring(
                    context: EngineContext(ledger: ledger, catalog: catalog, clock: clock, logger: logger),
                    identities: identities,
                    offerHook: settings.offerHook.map { hook in
                        MerchantOfferHook(
                            url: hook.url, secret: hook.secret, timeout: .milliseconds(hook.timeoutMilliseconds),
                            transport: HTTPClientProviderTransport(maxResponseBytes: 4 << 10), clock: clock)
                    }))
            let statements = StatementReconciler(
                ledger: ledger, sources: channels.statements, clock: clock, logger: logger)
            let statementChores = channels.statements.map { channel, source in
                StatementChore(
                    reconciler: statements, channel: channel, utcOffset: source.utcOffset,
                    hour: settings.reconcile.statementHour)
            }
            let reconciler = Reconciler(
                ledger: ledger, settlers: channels.settlers, replayers: channels.replayers,
                chores: channels.chores + statementChores, tasks: channels.tasks, clock: clock, logger: logger)
            try await reconciler.scheduleRecurring()
            return OrderSafeComponents(
                database: database, ledger: ledger, catalog: catalog, clock: clock,
                orders: OrderService(
                    ledger: ledger, catalog: catalog, identities: identities, clock: clock,
                    availableChannels: channels.names, queriedChannels: Set(channels.settlers.keys),
                    firstQueryAfter: TimeInterval(settings.reconcile.firstQuerySeconds),
                    unpaidOrderLimit: settings.limits.unpaidOrdersPerUser),
                channels: channels, reconciler: reconciler, statements: statements,
                runner: JobRunner(
                    ledger: ledger, reconciler: reconciler, clock: clock, logger: logger, owner: JobRunner.processOwner),
                refunds: RefundService(ledger: ledger, refunders: channels.refunders, clock: clock),
                webhooks: settings.webhooks.map { webhooks in
                    WebhookDispatcher(
                        ledger: ledger, url: webhooks.url, secret: webhooks.secret,
                        transport: HTTPClientProviderTransport(client: .notifications, maxResponseBytes: 64 << 10),
                        clock: clock, logger: logger)
                },
                sandbox: sandbox,
                backups: backupSchedule(settings, database: database, clock: clock, logger: logger))
        } catch {
            try? await database.shutdown()
            throw error
        }
    }
}
