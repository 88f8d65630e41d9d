import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    public func offerRedemptions(userID: String, offers: [String]) async throws -> Int {
        guard !offers.isEmpty else { return 0 }
        return try await database.read(joining: write) { db in
            // The user's orders (`orders_by_user`), then each one's payments (`payment_transactions_by_order`).
            let row = try await db.sql(
                """
                SELECT COUNT(*) AS n FROM orders o JOIN payment_transactions p ON p.order_id = o.id
                WHERE o.user_id = \(bind: userID) AND p.offer IN (\(binds: offers))
                """
            ).first()
            return Int(try row?.decode(column: "n", as: Int64.self) ?? 0)
        }
    }

    public func noteOfferSigned(
        offer: String, productID: String, orderNo: String, evidence: String, at date: Date, atMost: Int
    ) async throws -> Bool {
        try await database.transaction(joining: write) { db in
            let orderID = try await Self.orderID(db, orderNo: orderNo)
            let kept =
                try await db.sql(
                    """
                    SELECT COUNT(*) AS n FROM order_events WHERE order_id = \(bind: orderID) AND cause = \(bind: EventCause.app.rawValue)
                    """
                ).first()?.decode(column: "n", as: Int64.self) ?? 0
            guard kept < atMost else { return false }
            try await Self.appendEvent(
                db, orderID: orderID, kind: .offerSigned, from: nil, to: nil, cause: .app, evidence: evidence, at: date)
            try await db.sql(
                """
                INSERT INTO offer_signatures (offer, product_id, signed, last_signed_at)
                VALUES (\(bind: offer), \(bind: productID), 1, \(bind: date.millisecondsSince1970))
                ON CONFLICT (offer) DO UPDATE SET signed = offer_signatures.signed + 1,
                    last_signed_at = excluded.last_signed_at
                """
            ).run()
            return true
        }
    }

    public func offerCounts() async throws -> [OfferCount] {
        try await database.read(joining: write) { db in
            var counts: [String: OfferCount] = [:]
            for row in try await db.sql("SELECT offer, signed, last_signed_at FROM offer_signatures").all() {
                let offer = try row.decode(column: "offer", as: String.self)
                counts[offer] = OfferCount(
                    offer: offer, signed: Int(try row.decode(column: "signed", as: Int64.self)), redeemed: 0,
                    lastSignedAt: Date(millisecondsSince1970: try row.decode(column: "last_signed_at", as: Int64.self)))
            }
            // `payments_by_offer` holds only the payments that took an offer.
            for row in try await db.sql(
                "SELECT offer, COUNT(*) AS n FROM payment_transactions WHERE offer IS NOT NULL GROUP BY offer"
            ).all() {
                let offer = try row.decode(column: "offer", as: String.self)
                counts[offer, default: OfferCount(offer: offer, signed: 0, redeemed: 0, lastSignedAt: nil)].redeemed =
                    Int(try row.decode(column: "n", as: Int64.self))
            }
            return counts.values.sorted { $0.offer < $1.offer }
        }
    }
}
