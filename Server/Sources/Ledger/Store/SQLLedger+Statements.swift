import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    public func payments(
        channel: Channel, recordedFrom from: Date, before: Date, after cursor: PaymentCursor?, limit: Int
    ) async throws -> (payments: [RecordedPayment], next: PaymentCursor?) {
        let (afterAt, afterID) = (cursor?.recordedAt ?? .min, cursor?.id ?? .min)
        let page = try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT \(unsafeRaw: Self.paymentColumns), p.recorded_at AS page_at, p.id AS page_id
                FROM payment_transactions p JOIN orders o ON o.id = p.order_id
                WHERE p.recorded_at >= \(bind: from.millisecondsSince1970) AND p.recorded_at < \(bind: before.millisecondsSince1970)
                  AND p.channel = \(bind: channel.rawValue)
                  AND (p.recorded_at > \(bind: afterAt) OR (p.recorded_at = \(bind: afterAt) AND p.id > \(bind: afterID)))
                ORDER BY p.recorded_at, p.id LIMIT \(bind: limit)
                """
            ).all().map { row in
                (
                    try Self.decodePayment(row),
                    PaymentCursor(
                        recordedAt: try row.decode(column: "page_at", as: Int64.self),
                        id: try row.decode(column: "page_id", as: Int64.self))
                )
            }
        }
        return (page.map(\.0), page.count == limit ? page.last?.1 : nil)
    }

    public func paymentCount(channel: Channel, recordedFrom from: Date, before: Date) async throws -> Int {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT COUNT(*) AS n FROM payment_transactions
                WHERE recorded_at >= \(bind: from.millisecondsSince1970) AND recorded_at < \(bind: before.millisecondsSince1970)
                  AND channel = \(bind: channel.rawValue)
                """
            ).first().map { try $0.decode(column: "n", as: Int.self) } ?? 0
        }
    }

    public func payments(channel: Channel, reversedFrom from: Date, before: Date) async throws -> [RecordedPayment] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT \(unsafeRaw: Self.paymentColumns) FROM payment_transactions p JOIN orders o ON o.id = p.order_id
                WHERE p.reversed_at >= \(bind: from.millisecondsSince1970) AND p.reversed_at < \(bind: before.millisecondsSince1970)
                  AND p.channel = \(bind: channel.rawValue)
                ORDER BY p.reversed_at, p.id
                """
            ).all().map(Self.decodePayment)
        }
    }

    public func latestTransactionOfActiveUsers(channel: Channel, from: Date, before: Date) async throws -> [String] {
        let (channel, from, before) = (channel.rawValue, from.millisecondsSince1970, before.millisecondsSince1970)
        return try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT provider_txn_id FROM payment_transactions WHERE id IN (
                    SELECT MAX(id) FROM payment_transactions
                    WHERE channel = \(bind: channel) AND user_id IN (
                        SELECT user_id FROM orders
                        WHERE channel = \(bind: channel) AND created_at >= \(bind: from) AND created_at < \(bind: before)
                        UNION SELECT user_id FROM payment_transactions
                        WHERE channel = \(bind: channel) AND recorded_at >= \(bind: from) AND recorded_at < \(bind: before)
                        UNION SELECT user_id FROM subscription_states
                        WHERE expires_at >= \(bind: from) AND expires_at < \(bind: before))
                    GROUP BY user_id)
                ORDER BY id
                """
            ).all().map { try $0.decode(column: "provider_txn_id", as: String.self) }
        }
    }

    public func saveStatementRun(_ run: StatementRun) async throws {
        try await database.transaction(joining: write) { db in
            try await db.sql(
                """
                INSERT INTO statement_runs (channel, day, status, report, ran_at)
                VALUES (\(bind: run.channel.rawValue), \(bind: run.day), \(bind: run.status.rawValue), \(bind: run.report),
                        \(bind: run.ranAt.millisecondsSince1970))
                ON CONFLICT (channel, day) DO UPDATE SET status = excluded.status, report = excluded.report,
                    ran_at = excluded.ran_at
                """
            ).run()
        }
    }

    public func statementRun(channel: Channel, day: String) async throws -> StatementRun? {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT channel, day, status, report, ran_at FROM statement_runs
                WHERE channel = \(bind: channel.rawValue) AND day = \(bind: day)
                """
            ).first().map(Self.decodeStatementRun)
        }
    }

    public func statementRuns(limit: Int) async throws -> [StatementRun] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT channel, day, status, report, ran_at FROM statement_runs
                ORDER BY day DESC, channel LIMIT \(bind: limit)
                """
            ).all().map(Self.decodeStatementRun)
        }
    }

    private static func decodeStatementRun(_ row: any SQLRow) throws -> StatementRun {
        let name = try row.decode(column: "channel", as: String.self)
        guard let channel = Channel(rawValue: name) else {
            throw LedgerCorruption(detail: "statement run of unknown channel \(name)")
        }
        let status = try row.decode(column: "status", as: String.self)
        guard let known = StatementRunStatus(rawValue: status) else {
            throw LedgerCorruption(detail: "statement run of unknown status \(status)")
        }
        return StatementRun(
            channel: channel, day: try row.decode(column: "day", as: String.self), status: known,
            report: try row.decode(column: "report", as: String.self),
            ranAt: Date(millisecondsSince1970: try row.decode(column: "ran_at", as: Int64.self)))
    }
}
