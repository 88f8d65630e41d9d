import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    /// Takes back exactly what the payment granted: balances lose the units it added (going below zero is
    /// flagged, never clamped), an unlock it made is ended unless another live payment unlocked the same thing,
    /// an extension is shortened by its period (a provider-dated one ends where the latest period still standing
    /// ends, or now). The payment's `reversed_at` makes this happen once.
    ///
    /// A reversal of a payment not recorded yet (the refund arrived first) waits in the ledger and is applied in the
    /// same database transaction that records the payment (``fulfil(_:at:)``). A reinstatement (`REFUND_REVERSED`)
    /// that arrived before its reversal cancels it.
    public func reverse(_ reversal: Reversal, at date: Date) async throws -> ReversalOutcome {
        try await database.transaction(joining: write) { db in
            guard
                let payment = try await db.sql(
                    """
                    SELECT p.id FROM payment_transactions p
                    WHERE p.channel = \(bind: reversal.channel.rawValue) AND p.provider_txn_id = \(bind: reversal.providerTransactionID)
                    """
                ).first()
            else {
                if try await Self.takeWaiting(db, reversal.channel, reversal.providerTransactionID, kind: .reinstated)
                    == nil
                {
                    try await db.sql(
                        """
                        INSERT INTO waiting_reversals (channel, provider_txn_id, kind, cause, evidence, received_at)
                        VALUES (\(bind: reversal.channel.rawValue), \(bind: reversal.providerTransactionID), \(bind: reversal.kind.rawValue),
                                \(bind: reversal.cause.rawValue), \(bind: reversal.evidence), \(bind: date.millisecondsSince1970))
                        ON CONFLICT (channel, provider_txn_id) DO NOTHING
                        """
                    ).run()
                }
                return .unknownPayment
            }
            if try await Self.takeWaiting(db, reversal.channel, reversal.providerTransactionID, kind: .reinstated)
                != nil
            {
                // Its REFUND_REVERSED came first: the two cancel out.
                return .cancelledByReinstatement
            }
            return try await Self.reverse(
                db, paymentID: try payment.decode(column: "id", as: Int64.self), reversal, at: date)
        }
    }

    /// Applies reversals left waiting for a payment that is recorded after all, and reinstatements left waiting beside
    /// the reversal they cancel, each once and in its own transaction; returns how many were applied. On PostgreSQL
    /// two signals about one payment can pass each other on two replicas: a refund runs while another transaction is
    /// recording its payment, sees no payment (not committed yet) and waits, and that transaction looked for waiting
    /// reversals before this one committed; a `REFUND_REVERSED` finds nothing reversed and waits while the refund it
    /// cancels is being applied, which looked for a waiting reinstatement before it committed.
    public func applyStrandedReversals(at date: Date, limit: Int) async throws -> Int {
        let stranded = try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT w.channel, w.provider_txn_id, w.kind, p.id FROM waiting_reversals w
                JOIN payment_transactions p ON p.channel = w.channel AND p.provider_txn_id = w.provider_txn_id
                WHERE w.kind <> \(literal: Reversal.Waiting.reinstated) OR p.reversed_at IS NOT NULL
                ORDER BY w.received_at, p.id LIMIT \(bind: limit)
                """
            ).all().map { row in
                guard let channel = Channel(rawValue: try row.decode(column: "channel", as: String.self)) else {
                    throw LedgerCorruption(detail: "a waiting reversal has an unknown channel")
                }
                return (
                    channel, try row.decode(column: "provider_txn_id", as: String.self),
                    reinstatement: try row.decode(column: "kind", as: String.self)
                        == Reversal.Waiting.reinstated.rawValue,
                    try row.decode(column: "id", as: Int64.self)
                )
            }
        }
        var applied = 0
        for (channel, providerTransactionID, reinstatement, paymentID) in stranded {
            let done = try await database.transaction(joining: write) { db in
                // Taken in this transaction: a sweep on another replica finds it gone and changes nothing.
                guard
                    let waiting = try await Self.takeWaiting(
                        db, channel, providerTransactionID, kind: reinstatement ? .reinstated : nil)
                else {
                    return false
                }
                if reinstatement {
                    return try await Self.reinstateReversed(
                        db, channel: channel, providerTransactionID: providerTransactionID, cause: waiting.cause,
                        evidence: waiting.evidence,
                        at: date) != nil
                }
                switch try await Self.reverse(db, paymentID: paymentID, waiting, at: date) {
                case .reversed, .flagged: return true
                case .alreadyReversed, .unknownPayment, .cancelledByReinstatement: return false
                }
            }
            if done { applied += 1 }
        }
        return applied
    }

    /// Removes and returns the waiting entry of `kind` (`refunded`/`revoked` when nil) for a provider transaction.
    static func takeWaiting(
        _ db: any SQLDatabase, _ channel: Channel, _ providerTransactionID: String, kind: Reversal.Waiting?
    )
        async throws
        -> Reversal?
    {
        guard
            let row = try await db.sql(
                """
                SELECT kind, cause, evidence FROM waiting_reversals
                WHERE channel = \(bind: channel.rawValue) AND provider_txn_id = \(bind: providerTransactionID)
                """
            ).first()
        else { return nil }
        let stored = try row.decode(column: "kind", as: String.self)
        guard let found = Reversal.Waiting(rawValue: stored) else {
            throw LedgerCorruption(detail: "a waiting reversal of unknown kind \(stored)")
        }
        guard kind.map({ $0 == found }) ?? (found != .reinstated) else { return nil }
        try await db.sql(
            """
            DELETE FROM waiting_reversals WHERE channel = \(bind: channel.rawValue) AND provider_txn_id = \(bind: providerTransactionID)
            """
        ).run()
        return Reversal(
            channel: channel, providerTransactionID: providerTransactionID,
            kind: found == .revoked ? .revoked : .refunded,
            cause: EventCause(rawValue: try row.decode(column: "cause", as: String.self)) ?? .notification,
            evidence: try row.decode(column: "evidence", as: String.self))
    }

    /// Takes back what the recorded payment `paymentID` granted, inside the caller's transaction.
    static func reverse(_ db: any SQLDatabase, paymentID: Int64, _ reversal: Reversal, at date: Date) async throws
        -> ReversalOutcome
    {
        guard
            let payment = try await db.sql(
                """
                SELECT p.id, p.order_id, p.user_id, p.reversed_at, o.order_no FROM payment_transactions p
                JOIN orders o ON o.id = p.order_id WHERE p.id = \(bind: paymentID)
                """
            ).first()
        else { return .unknownPayment }
        let orderID = try payment.decode(column: "order_id", as: Int64.self)
        let userID = try payment.decode(column: "user_id", as: String.self)
        let orderNo = try payment.decode(column: "order_no", as: String.self)
        guard let order = try await Self.loadOrder(db, where: "id", orderID, forUpdate: true) else {
            throw LedgerError.unknownOrder(orderNo)
        }
        let now = date.millisecondsSince1970
        guard
            try await db.sql(
                """
                UPDATE payment_transactions SET reversed_at = \(bind: now), reversal = \(bind: reversal.kind.rawValue)
                WHERE id = \(bind: paymentID) AND reversed_at IS NULL RETURNING id
                """
            ).first() != nil
        else { return .alreadyReversed(orderNo: orderNo) }

        var negative = false
        let grants = try await db.sql(
            """
            SELECT id, kind, target, amount, period, provider_period_end FROM grants
            WHERE payment_transaction_id = \(bind: paymentID) AND reversed_at IS NULL ORDER BY grant_index
            """
        ).all()
        for grant in grants {
            let grantID = try grant.decode(column: "id", as: Int64.self)
            let target = try grant.decode(column: "target", as: String.self)
            switch Grant.Kind(rawValue: try grant.decode(column: "kind", as: String.self)) {
            case .addBalance:
                let units = try grant.decode(column: "amount", as: Int64?.self) ?? 0
                let left = try await db.sql(
                    """
                    UPDATE balances SET amount = amount - \(bind: units), updated_at = \(bind: now)
                    WHERE user_id = \(bind: userID) AND name = \(bind: target) RETURNING amount
                    """
                ).first()?.decode(column: "amount", as: Int64.self)
                if (left ?? -units) < 0 { negative = true }
            case .unlockEntitlement:
                let others =
                    try await db.sql(
                        """
                        SELECT COUNT(*) AS n FROM grants
                        WHERE user_id = \(bind: userID) AND kind = \(literal: Grant.Kind.unlockEntitlement) AND target = \(bind: target)
                          AND reversed_at IS NULL AND id <> \(bind: grantID)
                        """
                    ).first()?.decode(column: "n", as: Int64.self) ?? 0
                if others == 0 {
                    try await db.sql(
                        """
                        UPDATE entitlements SET expires_at = \(bind: now), updated_at = \(bind: now)
                        WHERE user_id = \(bind: userID) AND name = \(bind: target) AND expires_at IS NULL
                        """
                    ).run()
                }
            case .extendEntitlement:
                guard
                    let period = try grant.decode(column: "period", as: String?.self).flatMap(
                        GrantPeriod.init(iso8601:)),
                    let row = try await db.sql(
                        """
                        SELECT expires_at FROM entitlements WHERE user_id = \(bind: userID) AND name = \(bind: target)
                        """
                    ).first(),
                    let expires = try row.decode(column: "expires_at", as: Int64?.self)
                else { break }  // unlocked for good meanwhile, or gone: nothing to shorten
                let shortened: Int64
                if try grant.decodeNil(column: "provider_period_end") {
                    shortened = period.adding(to: Date(millisecondsSince1970: expires), times: -1).millisecondsSince1970
                } else {
                    // Provider-dated periods: the entitlement ends now, or where the latest period still standing ends.
                    let standing = try await db.sql(
                        """
                        SELECT MAX(COALESCE(provider_period_end, expires_at)) AS standing FROM grants
                        WHERE user_id = \(bind: userID) AND kind = \(literal: Grant.Kind.extendEntitlement) AND target = \(bind: target)
                          AND reversed_at IS NULL AND id <> \(bind: grantID)
                        """
                    ).first()?.decode(column: "standing", as: Int64?.self)
                    shortened = min(expires, max(now, standing ?? now))
                }
                try await db.sql(
                    """
                    UPDATE entitlements SET expires_at = \(bind: shortened), updated_at = \(bind: now)
                    WHERE user_id = \(bind: userID) AND name = \(bind: target)
                    """
                ).run()
            case nil:
                throw LedgerCorruption(detail: "grant \(grantID) has an unknown kind")
            }
            try await db.sql("UPDATE grants SET reversed_at = \(bind: now) WHERE id = \(bind: grantID)").run()
        }

        let evidence = "\(reversal.channel.rawValue):\(reversal.providerTransactionID) \(reversal.evidence)"
        let step = OrderLifecycle.reversing(reversal.kind, leavesNegativeBalance: negative)
        try await Self.setStatus(
            db, orderID: orderID, from: order.status, to: step.to, kind: step.kind, cause: reversal.cause,
            evidence: evidence, at: date)
        let reversed = try await Self.loadOrder(db, where: "id", orderID)!
        return negative ? .flagged(reversed, .negativeBalance) : .reversed(reversed)
    }
}

extension SQLLedger {
    public func reinstate(
        channel: Channel, providerTransactionID: String, cause: EventCause, evidence: String, at date: Date
    ) async throws
        -> Order?
    {
        try await database.transaction(joining: write) { db in
            if let order = try await Self.reinstateReversed(
                db, channel: channel, providerTransactionID: providerTransactionID, cause: cause, evidence: evidence,
                at: date)
            {
                return order
            }
            // Nothing reversed to put back: the reinstatement overtook its reversal. It cancels a reversal that waits
            // for its payment, or waits itself for the reversal to come.
            if try await Self.takeWaiting(db, channel, providerTransactionID, kind: nil) == nil {
                try await db.sql(
                    """
                    INSERT INTO waiting_reversals (channel, provider_txn_id, kind, cause, evidence, received_at)
                    VALUES (\(bind: channel.rawValue), \(bind: providerTransactionID), \(literal: Reversal.Waiting.reinstated), \(bind: cause.rawValue),
                            \(bind: evidence), \(bind: date.millisecondsSince1970))
                    ON CONFLICT (channel, provider_txn_id) DO NOTHING
                    """
                ).run()
            }
            return nil
        }
    }

    /// Puts back what a reversed payment granted and fulfils its order again, inside the caller's transaction; nil
    /// when the payment is not reversed (or unknown).
    static func reinstateReversed(
        _ db: any SQLDatabase, channel: Channel, providerTransactionID: String, cause: EventCause, evidence: String,
        at date: Date
    ) async throws -> Order? {
        guard
            let payment = try await db.sql(
                """
                UPDATE payment_transactions SET reversed_at = NULL, reversal = NULL
                WHERE channel = \(bind: channel.rawValue) AND provider_txn_id = \(bind: providerTransactionID) AND reversed_at IS NOT NULL
                RETURNING id, order_id, user_id
                """
            ).first()
        else { return nil }
        let paymentID = try payment.decode(column: "id", as: Int64.self)
        let orderID = try payment.decode(column: "order_id", as: Int64.self)
        let userID = try payment.decode(column: "user_id", as: String.self)
        let rows = try await db.sql(
            """
            SELECT grant_index, kind, target, amount, period, provider_period_end FROM grants
            WHERE payment_transaction_id = \(bind: paymentID) AND reversed_at IS NOT NULL ORDER BY grant_index
            """
        ).all()
        try await db.sql(
            "DELETE FROM grants WHERE payment_transaction_id = \(bind: paymentID) AND reversed_at IS NOT NULL"
        ).run()
        for row in rows {
            let target = try row.decode(column: "target", as: String.self)
            let grant: Grant
            switch Grant.Kind(rawValue: try row.decode(column: "kind", as: String.self)) {
            case .addBalance:
                grant = .addBalance(balance: target, amount: try row.decode(column: "amount", as: Int64?.self) ?? 0)
            case .unlockEntitlement: grant = .unlockEntitlement(entitlement: target)
            case .extendEntitlement:
                guard
                    let period = try row.decode(column: "period", as: String?.self).flatMap(GrantPeriod.init(iso8601:))
                else { continue }
                grant = .extendEntitlement(entitlement: target, period: period)
            case nil: throw LedgerCorruption(detail: "a grant of payment \(paymentID) has an unknown kind")
            }
            try await Self.apply(
                grant, index: Int(try row.decode(column: "grant_index", as: Int64.self)), paymentID: paymentID,
                userID: userID,
                periodEnd: try row.decode(column: "provider_period_end", as: Int64?.self), db: db, at: date)
        }
        guard let order = try await Self.loadOrder(db, where: "id", orderID, forUpdate: true) else { return nil }
        if order.status != .fulfilled {
            try await Self.setStatus(
                db, orderID: orderID, from: order.status, to: .fulfilled, kind: .reinstated, cause: cause,
                evidence: "\(channel.rawValue):\(providerTransactionID) \(evidence)", at: date)
        }
        return try await Self.loadOrder(db, where: "id", orderID)
    }
}
