import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    /// The overview's numbers at `now`: paid revenue per day of the last `days` days in `zone` (by channel and
    /// currency, sandbox orders excluded), orders by status, and the queues that need an operator. Revenue is what
    /// payments of their order's own amount brought: a payment of another amount is flagged for a human, and its
    /// amount is the provider's word (one signed as 2^63 − 1 would overflow any sum), not revenue.
    public func overview(now: Date, days: Int, zone: TimeZone) async throws -> LedgerOverview {
        let days = min(max(days, 1), 366)
        let calendar = Calendar.gregorian(in: zone)
        let firstDay = calendar.date(byAdding: .day, value: -(days - 1), to: calendar.startOfDay(for: now)) ?? now
        // The zone's offset now: day boundaries are exact for zones without daylight saving time (China's), and at
        // most an hour off around a change for the others.
        let offset = Int64(zone.secondsFromGMT(for: now)) * 1000
        let jobs = try await pendingJobs(now: now)
        return try await database.read(joining: write) { db in
            let revenue = try await db.sql(
                """
                SELECT (p.recorded_at + \(bind: offset)) / 86400000 AS day, p.channel, p.currency,
                       CAST(SUM(p.amount_minor) AS BIGINT) AS amount, COUNT(*) AS payments
                FROM payment_transactions p JOIN orders o ON o.id = p.order_id
                WHERE p.recorded_at >= \(bind: firstDay.millisecondsSince1970) AND o.sandbox = \(bind: false)
                  AND p.amount_minor = o.amount_minor AND p.currency = o.currency
                GROUP BY day, p.channel, p.currency ORDER BY day, p.channel, p.currency
                """
            ).all().compactMap { row -> LedgerOverview.RevenueDay? in
                guard let channel = Channel(rawValue: try row.decode(column: "channel", as: String.self)),
                    let currency = CurrencyCode(try row.decode(column: "currency", as: String.self))
                else { return nil }
                let day = try row.decode(column: "day", as: Int64.self)
                // Noon of that local day, formatted in the zone, names the day whatever the offset's sign.
                let noon = Date(timeIntervalSince1970: TimeInterval(day * 86400 + 43200 - offset / 1000))
                return LedgerOverview.RevenueDay(
                    day: LedgerOverview.dayName(noon, calendar), channel: channel,
                    amount: Money(amountMinor: try row.decode(column: "amount", as: Int64.self), currency: currency),
                    payments: Int(try row.decode(column: "payments", as: Int64.self)))
            }
            var byStatus: [OrderStatus: Int] = [:]
            for row in try await db.sql("SELECT status, COUNT(*) AS n FROM orders GROUP BY status").all() {
                if let status = OrderStatus(rawValue: try row.decode(column: "status", as: String.self)) {
                    byStatus[status] = Int(try row.decode(column: "n", as: Int64.self))
                }
            }
            let flaggedWaiting =
                try await db.sql(
                    """
                    SELECT COUNT(*) AS n FROM orders o WHERE o.status = 'flagged' AND \(unsafeRaw: Self.flagWaiting)
                    """
                ).first()?.decode(column: "n", as: Int64.self) ?? 0
            let oldest = try await db.sql(
                """
                SELECT \(unsafeRaw: Self.orderColumns) FROM orders WHERE status IN ('created', 'paying')
                ORDER BY created_at, id LIMIT 1
                """
            ).first().map(Self.decodeOrder)
            let webhooksFailing =
                try await db.sql(
                    """
                    SELECT COUNT(*) AS n FROM webhook_outbox WHERE delivered_at IS NULL AND last_error IS NOT NULL
                    """
                ).first()?.decode(column: "n", as: Int64.self) ?? 0
            let inboxFailed =
                try await db.sql(
                    """
                    SELECT COUNT(*) AS n FROM inbox WHERE verdict = 'failed' AND processed_at IS NULL
                    """
                ).first()?.decode(column: "n", as: Int64.self) ?? 0
            let held =
                try await db.sql(
                    """
                    SELECT COUNT(*) AS n FROM inbox WHERE \(unsafeRaw: Self.held)
                    """
                ).first()?.decode(column: "n", as: Int64.self) ?? 0
            return LedgerOverview(
                revenue: revenue, ordersByStatus: byStatus, flaggedWaiting: Int(flaggedWaiting),
                jobsDue: jobs.due, jobsLater: jobs.later,
                oldestUnsettled: oldest, webhooksFailing: Int(webhooksFailing), inboxFailed: Int(inboxFailed),
                heldSubmissions: Int(held))
        }
    }

}

extension Calendar {
    /// The Gregorian calendar in `zone`.
    public static func gregorian(in zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }
}

extension LedgerOverview {
    /// `YYYY-MM-DD` of `date` in the calendar's zone.
    public static func dayName(_ date: Date, _ calendar: Calendar) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
