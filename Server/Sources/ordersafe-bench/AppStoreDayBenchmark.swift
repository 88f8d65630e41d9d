import Foundation
import Ledger
import Logging
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

/// What an App Store statement day costs as the ledger grows: `--users N` customers who bought through the App Store
/// before (10,000, 100,000 and 1,000,000 by default), 1,000 of them active on the day. For each size: how many
/// transaction histories the day asks Apple for (one per customer who could have bought that day) and how long the
/// ledger takes to name them, beside the baseline measured in the same run — one history per customer ever seen (what
/// the day asked before) and the ledger's query for them.
///
/// `ordersafe-bench appstore-day [--users N]` (SQLite in a temporary folder).
enum AppStoreDayBenchmark {
    static let activeUsers = 1_000

    static func run(_ arguments: [String]) async throws -> Bool {
        let sizes =
            arguments.firstIndex(of: "--users").flatMap { $0 + 1 < arguments.count ? Int(arguments[$0 + 1]) : nil }
            .map { [$0] } ?? [10_000, 100_000, 1_000_000]
        print("App Store statement day: histories asked, and the ledger's query naming them (release build)")
        var met = true
        for users in sizes {
            met = try await measure(users: users) && met
        }
        return met
    }

    static func measure(users: Int) async throws -> Bool {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ordersafe-appstore-day-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var logger = Logger(label: "ordersafe.bench")
        logger.logLevel = .warning
        return try await LedgerDatabase.with(
            url: try DatabaseURL(parsing: "sqlite:\(folder.path)/ledger.sqlite"), maxConnectionsPerEventLoop: 2,
            logger: logger
        ) { database in
            _ = try await Migrator(database: database, logger: logger).migrate()
            let ledger = SQLLedger(database: database)
            let catalog = try Catalog(
                json: try Data(
                    contentsOf: URL(fileURLWithPath: "Sources/OrderSafeServer/Resources/catalog.example.json")))
            let version = try await ledger.saveCatalog(catalog, at: Date())
            let day = Date(timeIntervalSince1970: TimeInterval(1_795_000_000 - 1_795_000_000 % 86400))
            let seedStart = ContinuousClock.now
            try await seed(database, version: version, users: users, dayStart: day)
            let seeded = StatementBenchmark.seconds(since: seedStart)

            // The baseline: every customer's latest transaction (what the day asked Apple about before).
            let everyoneStart = ContinuousClock.now
            let everyone = try await database.withSession { db in
                try await db.raw(
                    """
                    SELECT provider_txn_id FROM payment_transactions WHERE id IN (
                        SELECT MAX(id) FROM payment_transactions WHERE channel = 'appstore' GROUP BY user_id)
                    """
                ).all().count
            }
            let everyoneSeconds = StatementBenchmark.seconds(since: everyoneStart)
            let activeStart = ContinuousClock.now
            let active = try await ledger.latestTransactionOfActiveUsers(
                channel: .appStore, from: day.addingTimeInterval(-86400), before: day.addingTimeInterval(86400 + 3600))
            let activeSeconds = StatementBenchmark.seconds(since: activeStart)
            print(
                String(
                    format:
                        "  %9d customers (seeded in %.1f s): histories asked %d (baseline %d, %.0fx fewer); the ledger names them in %.3f s (baseline query %.3f s)",
                    users, seeded, active.count, everyone, Double(everyone) / Double(max(active.count, 1)),
                    activeSeconds,
                    everyoneSeconds))
            return active.count == activeUsers && everyone == users
        }
    }

    /// `users` customers with an App Store order and payment three days before `dayStart`; the first
    /// ``activeUsers`` of them ordered and paid again on the day.
    static func seed(_ database: LedgerDatabase, version: CatalogVersion, users: Int, dayStart: Date) async throws {
        let base = dayStart.millisecondsSince1970
        let insert =
            "INSERT INTO orders (order_no, order_uuid, user_id, product_id, catalog_version_id, channel, status, amount_minor, currency, origin, created_at, updated_at)"
        func orders(from first: Int, to last: Int, userOf: String, at: String) -> String {
            let columns = """
                'AN' || n, printf('00000000-0000-4000-8000-%012d', n), \(userOf), 'coins_60', \(version.id), 'appstore',
                'fulfilled', 600, 'CNY', 'api', \(at), \(at)
                """
            return
                "\(insert) WITH RECURSIVE seq(n) AS (SELECT \(first) UNION ALL SELECT n + 1 FROM seq WHERE n < \(last)) SELECT \(columns) FROM seq"
        }
        var batches: [(Int, Int, String, String)] = stride(from: 1, through: users, by: 100_000).map {
            ($0, min($0 + 99_999, users), "'customer-' || n", "\(base - 3 * 86_400_000) + n")
        }
        batches.append((users + 1, users + activeUsers, "'customer-' || (n - \(users))", "\(base) + n"))
        for (first, last, userOf, at) in batches {
            let statement = orders(from: first, to: last, userOf: userOf, at: at)
            try await database.transaction { db in
                try await db.raw(SQLQueryString(statement)).run()
                try await db.raw(
                    """
                    INSERT INTO payment_transactions (channel, provider_txn_id, order_id, user_id, amount_minor, currency, cause, evidence, recorded_at)
                    SELECT channel, 'TX' || order_no, id, user_id, amount_minor, currency, 'notification', 'bench', created_at + 1000
                    FROM orders WHERE id >= (SELECT id FROM orders WHERE order_no = \(bind: "AN\(first)"))
                    """
                ).run()
            }
        }
        try await database.withSession { db in try await db.raw("ANALYZE").run() }
    }
}
