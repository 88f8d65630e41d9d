import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    public func recordSubscriptionSignal(_ signal: SubscriptionSignal) async throws {
        let body = signal.stored
        try await database.transaction(joining: write) { db in
            // The same rule as SubscriptionSignal.supersedes: later signedDate, then a revoked version (its JSON has
            // `"revokedAt":`), then the greater text.
            try await db.sql(
                """
                INSERT INTO subscription_signals (chain, kind, signal_key, signed_at, body)
                VALUES (\(bind: signal.chain), \(bind: signal.kind.rawValue), \(bind: signal.key), \(bind: signal.signedAt), \(bind: body))
                ON CONFLICT (chain, kind, signal_key) DO UPDATE SET signed_at = excluded.signed_at, body = excluded.body
                WHERE excluded.signed_at > subscription_signals.signed_at
                   OR (excluded.signed_at = subscription_signals.signed_at
                       AND ((excluded.body LIKE '%"revokedAt":%') > (subscription_signals.body LIKE '%"revokedAt":%')
                            OR ((excluded.body LIKE '%"revokedAt":%') = (subscription_signals.body LIKE '%"revokedAt":%')
                                AND excluded.body > subscription_signals.body)))
                """
            ).run()
        }
    }

    public func subscriptionSignals(userID: String) async throws -> [SubscriptionSignal] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT body FROM subscription_signals WHERE chain IN (
                    SELECT p.original_txn_id FROM orders o JOIN payment_transactions p ON p.order_id = o.id
                    WHERE o.user_id = \(bind: userID) AND p.channel = \(literal: Channel.appStore) AND p.original_txn_id IS NOT NULL)
                ORDER BY chain, kind, signal_key
                LIMIT \(bind: SubscriptionSignal.maxPerUser)
                """
            ).all().map(Self.subscriptionSignal)
        }
    }

    public func subscriptionSignals(chain: String) async throws -> [SubscriptionSignal] {
        try await database.read(joining: write) { db in
            try await db.sql(
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
            if LedgerDatabase.keepsWebhookEvents(db) {
                let event = SubscriptionWebhook(
                    id: Self.eventID(at: now), createdAt: date,
                    data: .init(cause: cause.rawValue, evidence: evidence, order: order, subscription: subscription))
                try await db.sql(
                    """
                    INSERT INTO webhook_outbox (event_id, event_type, order_id, payload, created_at, next_attempt_at)
                    VALUES (\(bind: event.id), \(bind: event.type), \(bind: orderID), \(bind: try event.json()), \(bind: now), \(bind: now))
                    """
                ).run()
            }
            let expires = subscription.expiresAt?.millisecondsSince1970
            let graceEnds = subscription.gracePeriodEndsAt?.millisecondsSince1970
            try await db.sql(
                """
                INSERT INTO subscription_states (chain, user_id, group_id, state, expires_at, grace_ends_at, changed_at)
                VALUES (\(bind: subscription.originalTransactionID), \(bind: order.userID), \(bind: subscription.groupID),
                        \(bind: subscription.state.rawValue), \(bind: expires), \(bind: graceEnds), \(bind: now))
                ON CONFLICT (chain) DO UPDATE SET user_id = excluded.user_id, group_id = excluded.group_id,
                    state = excluded.state, expires_at = excluded.expires_at, grace_ends_at = excluded.grace_ends_at,
                    changed_at = excluded.changed_at
                """
            ).run()
        }
    }

    public func subscriptionCounts(now: Date, churnSince: Date) async throws -> [SubscriptionGroupCounts] {
        let (now, since) = (now.millisecondsSince1970, churnSince.millisecondsSince1970)
        // A state lapses with time as the fold says: an active period past its end has lapsed (churned then, unless a
        // renewal is announced); a grace period past its end is billing retry.
        return try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT group_id,
                  SUM(CASE WHEN state = \(literal: SubscriptionState.active) AND (expires_at IS NULL OR expires_at > \(bind: now)) THEN 1 ELSE 0 END) AS active,
                  SUM(CASE WHEN state = \(literal: SubscriptionState.inGracePeriod) AND grace_ends_at > \(bind: now) THEN 1 ELSE 0 END) AS grace,
                  SUM(CASE WHEN state = \(literal: SubscriptionState.inBillingRetry)
                        OR (state = \(literal: SubscriptionState.inGracePeriod) AND (grace_ends_at IS NULL OR grace_ends_at <= \(bind: now)))
                      THEN 1 ELSE 0 END) AS retry,
                  SUM(CASE WHEN (state IN (\(literals: [SubscriptionState.expired, .revoked], joinedBy: ", ")) AND changed_at >= \(bind: since))
                        OR (state = \(literal: SubscriptionState.active) AND expires_at <= \(bind: now) AND expires_at >= \(bind: since))
                      THEN 1 ELSE 0 END) AS churned
                FROM subscription_states GROUP BY group_id ORDER BY group_id LIMIT 1000
                """
            ).all().map { row in
                SubscriptionGroupCounts(
                    groupID: try row.decode(column: "group_id", as: String.self),
                    active: Int(try row.decode(column: "active", as: Int64?.self) ?? 0),
                    inGracePeriod: Int(try row.decode(column: "grace", as: Int64?.self) ?? 0),
                    inBillingRetry: Int(try row.decode(column: "retry", as: Int64?.self) ?? 0),
                    churned: Int(try row.decode(column: "churned", as: Int64?.self) ?? 0))
            }
        }
    }

    public func subscriptionTimeline(chain: String) async throws -> [SubscriptionTimelineEntry] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT o.order_no, e.kind, e.evidence, e.created_at FROM order_events e
                JOIN orders o ON o.id = e.order_id
                WHERE e.order_id IN (SELECT order_id FROM payment_transactions
                                     WHERE channel = \(literal: Channel.appStore) AND original_txn_id = \(bind: chain))
                ORDER BY e.created_at, e.id LIMIT \(bind: SubscriptionTimelineEntry.maxEntries)
                """
            ).all().map { row in
                SubscriptionTimelineEntry(
                    orderNo: try row.decode(column: "order_no", as: String.self),
                    kind: OrderEventKind(rawValue: try row.decode(column: "kind", as: String.self)),
                    evidence: try row.decode(column: "evidence", as: String?.self),
                    at: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)))
            }
        }
    }

    private static func subscriptionSignal(_ row: any SQLRow) throws -> SubscriptionSignal {
        let body = try row.decode(column: "body", as: String.self)
        return try JSONDecoder().decode(SubscriptionSignal.self, from: Data(body.utf8))
    }
}
