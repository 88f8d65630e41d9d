import Foundation
import Ledger
import OrderSafeModel

/// `GET /v1/admin/orders`: a page of orders, newest first, and the cursor of the next page (absent on the last).
struct AdminOrderList: Encodable {
    var orders: [Order]
    var next_cursor: String?

    init(_ page: OrderPage) {
        orders = page.orders
        next_cursor = page.next?.description
    }
}

/// `GET /v1/admin/orders/{order_no}`: the order, its event history, payments, grants and webhook events.
struct AdminOrderDetail: Encodable {
    struct Event: Encodable {
        var kind: String
        var from_status: String?
        var to_status: String?
        var cause: String
        var evidence: String?
        var note: String?
        var created_at: Date
    }

    struct Payment: Encodable {
        var channel: Channel
        var transaction_id: String
        var original_transaction_id: String?
        var amount: Money
        var cause: String
        var recorded_at: Date
        var reversal: String?
        var reversed_at: Date?
    }

    struct GrantRecord: Encodable {
        var transaction_id: String
        var kind: String
        var target: String
        var amount: Int64?
        var period: String?
        var expires_at: Date?
        var reversed_at: Date?
    }

    struct Webhook: Encodable {
        var event_id: String
        var type: String
        var created_at: Date
        var attempts: Int
        var delivered_at: Date?
        var last_error: String?
    }

    struct Signal: Encodable {
        var id: Int64
        var channel: Channel
        var kind: String
        var received_at: Date
        var processed_at: Date?
        var attempts: Int
        var verdict: String?
        var last_error: String?
        var body_sha256: String
        var body_bytes: Int64
    }

    /// A provider transaction id claimed by one order while recorded for another.
    struct PaymentConflict: Encodable {
        var channel: Channel
        var transaction_id: String
        var claiming_order_no: String
        var recorded_order_no: String
        var amount: Money
        var cause: String
        var evidence: String
        var created_at: Date
    }

    var order: Order
    var flag_waiting: Bool
    var events: [Event]
    var events_total: Int
    var events_from: Int
    var payments: [Payment]
    var grants: [GrantRecord]
    var webhooks: [Webhook]
    var signals: [Signal]
    var payment_conflicts: [PaymentConflict]

    init(_ dossier: OrderDossier) {
        order = dossier.order
        flag_waiting = dossier.flagWaiting
        events_total = dossier.eventCount
        events_from = dossier.eventsFrom
        events = dossier.events.map {
            Event(
                kind: $0.kind.rawValue, from_status: $0.fromStatus?.rawValue, to_status: $0.toStatus?.rawValue,
                cause: $0.cause.rawValue,
                evidence: $0.evidence, note: $0.note, created_at: $0.createdAt)
        }
        payments = dossier.payments.map {
            Payment(
                channel: $0.channel, transaction_id: $0.providerTransactionID,
                original_transaction_id: $0.originalTransactionID,
                amount: $0.amount, cause: $0.cause.rawValue, recorded_at: $0.recordedAt,
                reversal: $0.reversal?.rawValue,
                reversed_at: $0.reversedAt)
        }
        grants = dossier.grants.map {
            GrantRecord(
                transaction_id: $0.providerTransactionID, kind: $0.kind.rawValue, target: $0.target, amount: $0.amount,
                period: $0.period,
                expires_at: $0.expiresAt, reversed_at: $0.reversedAt)
        }
        signals = dossier.signals.map {
            Signal(
                id: $0.id, channel: $0.channel, kind: $0.kind.rawValue, received_at: $0.receivedAt,
                processed_at: $0.processedAt,
                attempts: $0.attempts,
                verdict: $0.verdict?.rawValue, last_error: $0.lastError, body_sha256: $0.bodySHA256,
                body_bytes: $0.bodyBytes)
        }
        webhooks = dossier.webhooks.map {
            Webhook(
                event_id: $0.eventID, type: $0.type.rawValue, created_at: $0.createdAt, attempts: $0.attempts,
                delivered_at: $0.deliveredAt,
                last_error: $0.lastError)
        }
        payment_conflicts = dossier.conflicts.map {
            PaymentConflict(
                channel: $0.channel, transaction_id: $0.providerTransactionID, claiming_order_no: $0.claimingOrderNo,
                recorded_order_no: $0.recordedOrderNo, amount: $0.amount, cause: $0.cause.rawValue,
                evidence: $0.evidence,
                created_at: $0.createdAt)
        }
    }
}

/// `GET /v1/admin/users/{user_id}`: what the user holds and a page of their orders.
struct AdminUser: Encodable {
    var user_id: String
    var balances: [Balance]
    var entitlements: [Entitlement]
    var orders: [Order]
    var next_cursor: String?

    init(holdings: HoldingsResponse, page: OrderPage) {
        user_id = holdings.userID
        balances = holdings.balances
        entitlements = holdings.entitlements
        orders = page.orders
        next_cursor = page.next?.description
    }
}

/// `GET /v1/admin/stats`: the console overview's numbers.
struct AdminStats: Encodable {
    struct RevenueDay: Encodable {
        var day: String
        var channel: Channel
        var amount: Money
        var payments: Int
    }

    var time_zone: String
    var revenue: [RevenueDay]
    var orders_by_status: [String: Int]
    var flagged_waiting: Int
    var jobs_due: Int
    var jobs_later: Int
    var oldest_unsettled: Order?
    var webhooks_failing: Int
    var inbox_failed: Int
    var held_submissions: Int

    init(_ overview: LedgerOverview, zone: TimeZone) {
        time_zone = zone.identifier
        revenue = overview.revenue.map {
            RevenueDay(day: $0.day, channel: $0.channel, amount: $0.amount, payments: $0.payments)
        }
        orders_by_status = Dictionary(
            uniqueKeysWithValues: OrderStatus.allCases.map { ($0.rawValue, overview.ordersByStatus[$0] ?? 0) })
        flagged_waiting = overview.flaggedWaiting
        jobs_due = overview.jobsDue
        jobs_later = overview.jobsLater
        oldest_unsettled = overview.oldestUnsettled
        webhooks_failing = overview.webhooksFailing
        inbox_failed = overview.inboxFailed
        held_submissions = overview.heldSubmissions
    }
}

/// `GET /v1/admin/operations`: the job queue, failing inbox entries, the webhook delivery log and the operators' log.
struct AdminOperations: Encodable {
    struct Job: Encodable {
        var id: Int64
        var kind: String
        var key: String
        var run_at: Date
        var attempts: Int
        var lease_owner: String?
        var lease_until: Date?
        var last_error: String?
    }

    struct InboxEntry: Encodable {
        var id: Int64
        var channel: Channel
        var kind: String
        var received_at: Date
        var attempts: Int
        var verdict: String?
        var last_error: String?
    }

    struct Attempt: Encodable {
        var event_id: String
        var type: String
        var order_no: String?
        var attempt: Int
        var attempted_at: Date
        var status_code: Int?
        var error: String?
        var duration_ms: Int64
    }

    struct Action: Encodable {
        var operator_name: String
        var action: String
        var target: String?
        var detail: String?
        var at: Date
    }

    var jobs: [Job]
    var inbox: [InboxEntry]
    var webhook_attempts: [Attempt]
    var operator_actions: [Action]

    init(jobs: [QueuedJob], inbox: [InboxProblem], attempts: [WebhookAttemptRecord], actions: [OperatorAction]) {
        self.jobs = jobs.map {
            Job(
                id: $0.id, kind: $0.kind.rawValue, key: $0.key, run_at: $0.runAt, attempts: $0.attempts,
                lease_owner: $0.leaseOwner,
                lease_until: $0.leaseUntil, last_error: $0.lastError)
        }
        self.inbox = inbox.map {
            InboxEntry(
                id: $0.id, channel: $0.channel, kind: $0.kind.rawValue, received_at: $0.receivedAt,
                attempts: $0.attempts,
                verdict: $0.verdict?.rawValue,
                last_error: $0.lastError)
        }
        webhook_attempts = attempts.map {
            Attempt(
                event_id: $0.eventID, type: $0.type.rawValue, order_no: $0.orderNo, attempt: $0.attempt,
                attempted_at: $0.attemptedAt,
                status_code: $0.statusCode, error: $0.error, duration_ms: $0.durationMS)
        }
        operator_actions = actions.map {
            Action(
                operator_name: $0.operatorName, action: $0.action.rawValue, target: $0.target, detail: $0.detail,
                at: $0.at)
        }
    }
}
