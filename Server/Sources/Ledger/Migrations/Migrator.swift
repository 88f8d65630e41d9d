import Foundation
import Logging
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

/// Applies the ledger's forward-only migrations, each in its own transaction, safely from several replicas at once.
public struct Migrator: Sendable {
    let database: LedgerDatabase
    let logger: Logger

    public init(database: LedgerDatabase, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// The schema version this build expects.
    public static var latestVersion: Int { Schema.latestVersion }

    /// The version the database is at (0 when empty).
    public func currentVersion() async throws -> Int {
        try await database.withSession { db in
            try await Self.ensureVersionTable(db)
            return try await Self.appliedVersion(db)
        }
    }

    /// The version applied, read only (no DDL, for readiness probes); 0 before the first migration.
    public func appliedVersion() async throws -> Int {
        try await database.withSession { db in try await Self.appliedVersion(db) }
    }

    /// Applies every pending migration; returns how many were applied.
    @discardableResult
    public func migrate(now: Date = Date()) async throws -> Int {
        try await database.withSession { db in try await Self.ensureVersionTable(db) }
        var applied = 0
        for migration in Schema.migrations {
            let didApply = try await database.transaction { [engine = database.engine] db in
                if engine == .postgres {
                    // Serialises concurrent migrators (several replicas starting at once) for this transaction.
                    try await db.sql("LOCK TABLE schema_migrations IN EXCLUSIVE MODE").run()
                }
                let current = try await Self.appliedVersion(db)
                if current > Schema.latestVersion {
                    throw LedgerError.schemaTooNew(database: current, binary: Schema.latestVersion)
                }
                guard current < migration.version else { return false }
                for statement in migration.sql(for: engine) {
                    try await db.sql(LedgerSQL(statement)).run()
                }
                try await migration.engineSteps[engine]?(db)
                try await db.sql(
                    """
                    INSERT INTO schema_migrations (version, name, applied_at)
                    VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: now.millisecondsSince1970))
                    """
                ).run()
                return true
            }
            if didApply {
                applied += 1
                logger.info(
                    "applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            }
        }
        let current = try await currentVersion()
        if current > Schema.latestVersion {
            throw LedgerError.schemaTooNew(database: current, binary: Schema.latestVersion)
        }
        return applied
    }

    /// Refuses a PostgreSQL server older than 12, the first with `COMMIT AND CHAIN` (which the writer commits with
    /// under load); `serverVersionNum` is its `server_version_num` (120000 for 12.0).
    public static func checkPostgres(serverVersionNum: Int) throws(LedgerError) {
        guard serverVersionNum >= 120_000 else { throw .postgresTooOld(version: serverVersionNum) }
    }

    private static func ensureVersionTable(_ db: any SQLDatabase) async throws {
        if db.dialect.name == "postgresql" {
            let version = try await db.sql("SELECT current_setting('server_version_num')::int8 AS v").first()?
                .decode(column: "v", as: Int64.self)
            try checkPostgres(serverVersionNum: version.flatMap { Int(exactly: $0) } ?? 0)
        }
        // Two replicas creating the table at the same moment can collide in PostgreSQL's catalog; the loser retries.
        do {
            try await createVersionTable(db)
        } catch {
            try await createVersionTable(db)
        }
    }

    private static func createVersionTable(_ db: any SQLDatabase) async throws {
        try await db.sql(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)
            """
        ).run()
    }

    private static func appliedVersion(_ db: any SQLDatabase) async throws -> Int {
        let row = try await db.sql("SELECT MAX(version) AS version FROM schema_migrations").first()
        return try row?.decodeNil(column: "version") == false ? try row!.decode(column: "version", as: Int.self) : 0
    }
}
