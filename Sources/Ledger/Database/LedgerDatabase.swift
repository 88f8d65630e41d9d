import Foundation
import Logging
import SQLKit

/// The SQL engine behind the ledger, for the few statements whose spelling differs.
public enum SQLEngine: String, Sendable {
    case sqlite
    case postgres
}

/// A connection to the ledger's database, SQLite or PostgreSQL, with transactions.
public final class LedgerDatabase: Sendable {
    public let url: DatabaseURL
    public let engine: SQLEngine
    private let source: any SQLSessionSource

    /// Opens (and for SQLite, creates) the database. No connection is made until first use.
    public init(url: DatabaseURL, maxConnectionsPerEventLoop: Int = 4, logger: Logger) throws {
        self.url = url
        switch url {
        case .sqliteFile(let path):
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            source = SQLiteSessionSource(storage: .file(path: path), logger: logger)
            engine = .sqlite
        case .sqliteMemory:
            source = SQLiteSessionSource(storage: .memory, logger: logger)
            engine = .sqlite
        case .postgres(let text):
            source = try PostgresSessionSource(
                url: text, maxConnectionsPerEventLoop: maxConnectionsPerEventLoop, logger: logger)
            engine = .postgres
        }
    }

    /// Runs `body` on one connection, outside any transaction.
    public func withSession<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    {
        try await source.withSession(body)
    }

    /// Runs `body` in one database transaction: committed if it returns, rolled back if it throws.
    public func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    {
        let begin = engine == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN"
        return try await source.withSession { db in
            try await db.raw(SQLQueryString(begin)).run()
            do {
                let result = try await body(db)
                try await db.raw("COMMIT").run()
                return result
            } catch {
                try? await db.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    /// True when a simple query succeeds.
    public func ping() async -> Bool {
        do {
            return try await withSession { db in try await db.raw("SELECT 1 AS one").first() != nil }
        } catch {
            return false
        }
    }

    /// Closes every connection. Call once, at shutdown.
    public func shutdown() async throws {
        try await source.shutdown()
    }
}
