import Foundation
import Ledger
import Logging
import OrderSafeModel
import PostgresKit
import SQLKit
import Testing

/// The engines the conformance suite runs on: SQLite always, PostgreSQL when `ORDERSAFE_TEST_POSTGRES_URL` is set
/// (`scripts/test` starts a private cluster and sets it).
public enum TestEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    public static let postgresURL = ProcessInfo.processInfo.environment["ORDERSAFE_TEST_POSTGRES_URL"]

    public static var available: [TestEngine] {
        if postgresURL == nil {
            print(
                """
                ⚠️  ORDERSAFE_TEST_POSTGRES_URL is not set: the ledger suite runs on SQLite only.
                ⚠️  Run scripts/test to run it on PostgreSQL too.
                """)
            return [.sqlite]
        }
        return [.sqlite, .postgres]
    }

    public var testDescription: String { rawValue }

    /// A fresh, migrated, empty database of this engine, by URL, so several pools can open it (replicas); dropped
    /// by `body`'s end.
    public func withDatabaseURL<R>(_ body: (DatabaseURL) async throws -> R) async throws -> R {
        switch self {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ledger-\(UUID().uuidString).sqlite"
            ).path
            defer {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
            try await Self.migrate(.sqliteFile(path: path))
            return try await body(.sqliteFile(path: path))
        case .postgres:
            return try await PostgresDatabaseGate.shared.admitting { try await Self.withPostgresDatabase(body) }
        }
    }

    private static func withPostgresDatabase<R>(_ body: (DatabaseURL) async throws -> R) async throws -> R {
        let name = "ordersafe_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
        do {
            try await admin("CREATE DATABASE \(name)")
        } catch {
            throw PostgresTestFailure.readable(error)
        }
        var components = URLComponents(string: postgresURL!)!
        components.path = "/\(name)"
        let url = DatabaseURL.postgres(url: components.string!)
        do {
            try await migrate(url)
            let result = try await body(url)
            try await admin("DROP DATABASE \(name) WITH (FORCE)")
            return result
        } catch {
            try? await admin("DROP DATABASE \(name) WITH (FORCE)")
            throw PostgresTestFailure.readable(error)
        }
    }

    /// A fresh, migrated, empty database of this engine with one pool; dropped by `body`'s end.
    public func withLedger<R: Sendable>(_ body: (LedgerDatabase, SQLLedger) async throws -> R) async throws -> R {
        try await withDatabaseURL { url in
            try await LedgerDatabase.with(url: url, logger: TestLog.logger) { database in
                try await body(database, SQLLedger(database: database))
            }
        }
    }

    /// Two pools on one fresh database of this engine: two replicas.
    public func withTwoPools(_ body: (SQLLedger, SQLLedger) async throws -> Void) async throws {
        try await withDatabaseURL { url in
            try await LedgerDatabase.with(url: url, logger: TestLog.logger) { one in
                try await LedgerDatabase.with(url: url, logger: TestLog.logger) { two in
                    try await body(SQLLedger(database: one), SQLLedger(database: two))
                }
            }
        }
    }

    private static func migrate(_ url: DatabaseURL) async throws {
        _ = try await LedgerDatabase.with(url: url, logger: TestLog.logger) { database in
            try await Migrator(database: database, logger: TestLog.logger).migrate()
        }
    }

    private static func admin(_ statement: String) async throws {
        try await LedgerDatabase.with(
            url: .postgres(url: postgresURL!), maxConnectionsPerEventLoop: 1, logger: TestLog.logger
        ) { database in
            try await database.withSession { db in try await db.raw(SQLQueryString(statement)).run() }
        }
    }
}

/// A PostgreSQL error as PostgresNIO describes it to a programmer (`String(reflecting:)`): the server's message and
/// code, which its plain description hides.
public struct PostgresTestFailure: Error, CustomStringConvertible {
    public let description: String

    /// `error` itself, or when it is PostgresNIO's, whose description is generic on purpose (it may hold data), a
    /// failure that says what the server said.
    static func readable(_ error: any Error) -> any Error {
        guard let error = error as? PSQLError else { return error }
        return PostgresTestFailure(description: String(reflecting: error))
    }
}
