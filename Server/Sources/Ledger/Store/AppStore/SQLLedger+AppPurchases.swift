import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    public func noteAppPurchase(_ purchase: AppPurchase, userID: String, at date: Date) async throws -> Bool {
        try await database.transaction(joining: write) { db in
            let others =
                try await db.sql(
                    """
                    SELECT COUNT(*) AS n FROM app_purchases
                    WHERE user_id = \(bind: userID) AND app_transaction_id <> \(bind: purchase.appTransactionID)
                    """
                ).first()?.decode(column: "n", as: Int64.self) ?? 0
            guard others < AppPurchaseLimit.perUser else { return false }
            try await db.sql(
                """
                INSERT INTO app_purchases (user_id, app_transaction_id, original_application_version,
                                           original_purchase_date, environment, first_seen_at, last_seen_at)
                VALUES (\(bind: userID), \(bind: purchase.appTransactionID), \(bind: purchase.originalApplicationVersion),
                        \(bind: purchase.originalPurchaseDate?.millisecondsSince1970), \(bind: purchase.environment),
                        \(bind: date.millisecondsSince1970), \(bind: date.millisecondsSince1970))
                ON CONFLICT (user_id, app_transaction_id) DO UPDATE SET
                    original_application_version = excluded.original_application_version,
                    original_purchase_date = excluded.original_purchase_date, environment = excluded.environment,
                    last_seen_at = excluded.last_seen_at
                """
            ).run()
            return true
        }
    }

    public func appPurchases(userID: String) async throws -> [AppPurchase] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT app_transaction_id, original_application_version, original_purchase_date, environment
                FROM app_purchases WHERE user_id = \(bind: userID)
                """
            ).all().map { row in
                AppPurchase(
                    appTransactionID: try row.decode(column: "app_transaction_id", as: String.self),
                    originalApplicationVersion: try row.decode(column: "original_application_version", as: String.self),
                    originalPurchaseDate: try row.decode(column: "original_purchase_date", as: Int64?.self)
                        .map(Date.init(millisecondsSince1970:)),
                    environment: try row.decode(column: "environment", as: String.self))
            }
            .sorted {
                ($0.originalPurchaseDate ?? .distantFuture, $0.appTransactionID)
                    < ($1.originalPurchaseDate ?? .distantFuture, $1.appTransactionID)
            }
        }
    }
}
