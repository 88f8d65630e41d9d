import Foundation
import OrderSafeModel
import SQLKit

extension SQLLedger {
    public func recordSubscriptionSignal(_ signal: SubscriptionSignal) async throws {
        let body = signal.stored
        try await database.transaction(joining: write) { db in
            // The same rule as SubscriptionSignal.supersedes: later signedDate, then the greater text.
            try await db.raw(
                """
                INSERT INTO subscription_signals (chain, kind, signal_key, signed_at, body)
                VALUES (\(bind: signal.chain), \(bind: signal.kind.rawValue), \(bind: signal.key), \(bind: signal.signedAt), \(bind: body))
                ON CONFLICT (chain, kind, signal_key) DO UPDATE SET signed_at = excluded.signed_at, body = excluded.body
                WHERE excluded.signed_at > subscription_signals.signed_at
                   OR (excluded.signed_at = subscription_signals.signed_at AND excluded.body > subscription_signals.body)
                """
            ).run()
        }
    }

    public func subscriptionSignals(userID: String) async throws -> [SubscriptionSignal] {
        try await database.read(joining: write) { db in
            try await db.raw(
                """
                SELECT body FROM subscription_signals WHERE chain IN (
                    SELECT p.original_txn_id FROM orders o JOIN payment_transactions p ON p.order_id = o.id
                    WHERE o.user_id = \(bind: userID) AND p.channel = 'appstore' AND p.original_txn_id IS NOT NULL)
                ORDER BY chain, kind, signal_key
                LIMIT \(bind: SubscriptionSignal.maxPerUser)
                """
            ).all().map(Self.subscriptionSignal)
        }
    }

    public func subscriptionSignals(chain: String) async throws -> [SubscriptionSignal] {
        try await database.read(joining: write) { db in
            try await db.raw(
                """
                SELECT body FROM subscription_signals WHERE chain = \(bind: chain)
                ORDER BY kind, signal_key LIMIT \(bind: SubscriptionSignal.maxPerUser)
                """
            ).all().map(Self.subscriptionSignal)
        }
    }

    public func subscriptionChanged(
        orderNo: String, to subscription: UserSubscription, cause: EventCause, evidence: String, at date: Date
    ) async throws {
        try await database.transaction(joining: write) { db in
            let orderID = try await Self.orderID(db, orderNo: orderNo)
            try await Self.appendEvent(
                db, orderID: orderID, kind: .subscription(subscription.state), from: nil, to: nil, cause: cause,
                evidence: evidence, at: date)
            guard let order = try await Self.loadOrder(db, where: "id", orderID) else { return }
            let now = date.millisecondsSince1970
            let event = SubscriptionWebhook(
                id: Self.eventID(at: now), createdAt: date,
                data: .init(cause: cause.rawValue, evidence: evidence, order: order, subscription: subscription))
            try await db.raw(
                """
                INSERT INTO webhook_outbox (event_id, event_type, order_id, payload, created_at, next_attempt_at)
                VALUES (\(bind: event.id), \(bind: event.type), \(bind: orderID), \(bind: try event.json()), \(bind: now), \(bind: now))
                """
            ).run()
        }
    }

    private static func subscriptionSignal(_ row: any SQLRow) throws -> SubscriptionSignal {
        let body = try row.decode(column: "body", as: String.self)
        return try JSONDecoder().decode(SubscriptionSignal.self, from: Data(body.utf8))
    }
}
