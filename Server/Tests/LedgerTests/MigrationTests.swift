import Foundation
import Ledger
import LedgerTestSupport
import Logging
import SQLKit
import Testing

@Suite("Ledger migrations")
struct MigrationTests {
    @Test("migrating twice applies nothing the second time", arguments: TestEngine.available)
    func idempotent(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let migrator = Migrator(database: database, logger: TestLog.logger)
            #expect(try await migrator.currentVersion() == Migrator.latestVersion)
            #expect(try await migrator.migrate() == 0)
            try await ledger.checkSchema()
        }
    }

    @Test(
        "an order names a product of an existing catalog version, and keeps both from being deleted",
        arguments: TestEngine.available)
    func ordersReferenceTheirCatalog(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            _ = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
            func insertOrder(version: Int64, product: String) async throws {
                try await database.transaction { db in
                    try await db.raw(
                        """
                        INSERT INTO orders (order_no, order_uuid, user_id, product_id, catalog_version_id, channel, status,
                                            amount_minor, currency, origin, created_at, updated_at)
                        VALUES (\(bind: "T-REF-\(version)-\(product)"), \(bind: UUID().uuidString), 'user-ref', \(bind: product), \(bind: version),
                                'appstore', 'created', 600, 'CNY', 'api', 0, 0)
                        """
                    ).run()
                }
            }
            await #expect(throws: (any Error).self) {
                try await insertOrder(version: version.id + 1, product: "coins_60")
            }
            await #expect(throws: (any Error).self) {
                try await insertOrder(version: version.id, product: "no_such_product")
            }
            try await insertOrder(version: version.id, product: "coins_60")
            await #expect(throws: (any Error).self) {
                try await database.transaction { db in
                    try await db.raw("DELETE FROM products WHERE catalog_version_id = \(bind: version.id)").run()
                }
            }
            await #expect(throws: (any Error).self) {
                try await database.transaction { db in
                    try await db.raw("DELETE FROM catalog_versions WHERE id = \(bind: version.id)").run()
                }
            }
        }
    }

    @Test(
        "an order paid nothing (a free trial) is kept, a negative amount still refused; SQLite's edited schema is sound",
        arguments: TestEngine.available)
    func freeOfferPeriods(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            try await Self.insertOrder(database, version: version.id, amount: 0)
            await #expect(throws: (any Error).self) {
                try await Self.insertOrder(database, version: version.id, amount: -1)
            }
            try await Self.expectSoundSchema(engine, database, ledger)
        }
    }

    @Test(
        "a channel column admits any channel's name and nothing else (a name, not the first three); the edited schema is sound",
        arguments: TestEngine.available)
    func channelNames(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            func insertStatementRun(channel: String) async throws {
                try await database.transaction { db in
                    try await db.raw(
                        """
                        INSERT INTO statement_runs (channel, day, status, report, ran_at)
                        VALUES (\(bind: channel), '2026-11-29', 'waiting', '{}', 0)
                        """
                    ).run()
                }
            }
            for name in ["appstore", "alipay", "wechatpay", "toy", "unionpay2"] {
                try await Self.insertOrder(database, version: version.id, channel: name)
            }
            try await insertStatementRun(channel: "toy")
            for name in ["", "Toy", "2pay", "union-pay", "wechat pay", String(repeating: "a", count: 33)] {
                await #expect(throws: (any Error).self, "\(name)") {
                    try await Self.insertOrder(database, version: version.id, channel: name)
                }
            }
            await #expect(throws: (any Error).self) { try await insertStatementRun(channel: "Toy") }
            try await Self.expectSoundSchema(engine, database, ledger)
        }
    }

    @Test(
        "a CHECK of listed values admits them and nothing else; on SQLite none lists three or more (a temporary index each insert)",
        arguments: TestEngine.available)
    func listedValues(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            for status in ["created", "paying", "paid", "fulfilled", "cancelled", "closed", "failed", "refunded"]
                + ["revoked", "flagged"]
            {
                try await Self.insertOrder(database, version: version.id, status: status)
            }
            for status in ["", "Paid", "paid ", "unknown", "created' OR 'x", "NULL"] {
                await #expect(throws: (any Error).self, "\(status)") {
                    try await Self.insertOrder(database, version: version.id, status: status)
                }
            }
            if engine == .sqlite {
                let listing = try await database.withSession { db in
                    try await db.raw("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all().compactMap {
                        row -> String? in
                        let sql = try row.decode(column: "sql", as: String.self)
                        let lists = sql.matches(of: #/ IN \(('[^']*',){2,}'[^']*'\)/#)
                        return lists.isEmpty ? nil : try row.decode(column: "name", as: String.self)
                    }
                }
                #expect(listing == [])
            }
            try await Self.expectSoundSchema(engine, database, ledger)
        }
    }

    /// Inserts an order of `coins_60` as it stands in the table, past the ledger's own checks.
    static func insertOrder(
        _ database: LedgerDatabase, version: Int64, channel: String = "appstore", amount: Int64 = 600,
        status: String = "created"
    ) async throws {
        try await database.transaction { db in
            try await db.raw(
                """
                INSERT INTO orders (order_no, order_uuid, user_id, product_id, catalog_version_id, channel, status,
                                    amount_minor, currency, origin, created_at, updated_at)
                VALUES (\(bind: "T-\(UUID().uuidString.prefix(12))"), \(bind: UUID().uuidString), 'user-m', 'coins_60',
                        \(bind: version), \(bind: channel), \(bind: status), \(bind: amount), 'CNY', 'api', 0, 0)
                """
            ).run()
        }
    }

    /// A schema edited in place is sound: SQLite's integrity check passes, and the ledger finds what it expects.
    static func expectSoundSchema(_ engine: TestEngine, _ database: LedgerDatabase, _ ledger: SQLLedger) async throws {
        if engine == .sqlite {
            let check = try await database.withSession { db in
                try await db.raw("PRAGMA integrity_check").first()?.decode(column: "integrity_check", as: String.self)
            }
            #expect(check == "ok")
        }
        try await ledger.checkSchema()
    }

    @Test("a PostgreSQL server older than 12 is refused, naming its version; 12 and later are taken")
    func oldPostgresRefused() throws {
        #expect(throws: LedgerError.postgresTooOld(version: 110_022)) {
            try Migrator.checkPostgres(serverVersionNum: 110_022)
        }
        #expect(
            LedgerError.postgresTooOld(version: 110_022).description
                == "PostgreSQL 11 is older than the ledger supports: it needs PostgreSQL 12 or later")
        try Migrator.checkPostgres(serverVersionNum: 120_000)
        try Migrator.checkPostgres(serverVersionNum: 170_002)
    }

    @Test("concurrent migrators on one database agree", arguments: TestEngine.available)
    func concurrent(engine: TestEngine) async throws {
        try await engine.withLedger { database, _ in
            let url = database.url
            // A second connection pool to the same database, as a second replica would have.
            let other = try LedgerDatabase(url: url, logger: TestLog.logger)
            let applied = try await withThrowingTaskGroup(of: Int.self) { group in
                for db in [database, other] {
                    group.addTask { try await Migrator(database: db, logger: TestLog.logger).migrate() }
                }
                return try await group.reduce(0, +)
            }
            try await other.shutdown()
            #expect(applied == 0)
        }
    }

    @Test(
        "a newer binary's database: migrating refuses it, but a running replica stays ready (rolling upgrade)",
        arguments: TestEngine.available)
    func tooNew(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            try await database.withSession { db in
                try await db.raw("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)")
                    .run()
            }
            await #expect(throws: LedgerError.schemaTooNew(database: 999, binary: Migrator.latestVersion)) {
                try await Migrator(database: database, logger: TestLog.logger).migrate()
            }
            try await ledger.checkSchema()
        }
    }

    @Test(
        "the readiness check runs no DDL: on an empty database it reports the schema missing and creates nothing",
        arguments: TestEngine.available)
    func readinessIsReadOnly(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            try await database.withSession { db in try await db.raw("DROP TABLE schema_migrations").run() }
            await #expect(throws: LedgerError.schemaOutdated(database: 0, binary: Migrator.latestVersion)) {
                try await ledger.checkSchema()
            }
            await #expect(throws: (any Error).self) {
                try await database.withSession { db in try await db.raw("SELECT version FROM schema_migrations").run() }
            }
        }
    }

    @Test("the order event log is append-only in the database itself", arguments: TestEngine.available)
    func appendOnlyEvents(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let version = try await ledger.saveCatalog(Fixtures.catalog, at: Fixtures.now)
            _ = try await ledger.createOrder(Fixtures.newOrder(version), identity: Fixtures.randomIdentity)
            await #expect(throws: (any Error).self) {
                try await database.withSession { db in try await db.raw("UPDATE order_events SET kind = 'forged'").run()
                }
            }
            await #expect(throws: (any Error).self) {
                try await database.withSession { db in try await db.raw("DELETE FROM order_events").run() }
            }
            let count = try await database.withSession { db in
                try await db.raw("SELECT COUNT(*) AS n FROM order_events").first()!.decode(column: "n", as: Int.self)
            }
            #expect(count == 1)
        }
    }
}
