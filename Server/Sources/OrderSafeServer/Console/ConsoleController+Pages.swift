import Engine
import Foundation
import Hummingbird
import Ledger
import OrderSafeModel

extension ConsoleController {
    func addPageRoutes(to admin: RouterGroup<OrderSafeRequestContext>) {
        admin.get { request, context in
            try await signedIn(request, context) { page in try await overview(page) }
        }
        admin.get("orders") { request, context in
            try await signedIn(request, context) { page in try await orders(page) }
        }
        admin.get("orders/:order_no") { request, context in
            try await signedIn(request, context) { page in
                try await order(page, orderNo: try context.parameters.require("order_no"))
            }
        }
        admin.get("orders/:order_no/refund") { request, context in
            try await signedIn(request, context) { page in
                try await refundConfirmation(page, orderNo: try context.parameters.require("order_no"))
            }
        }
        admin.get("users/:user_id") { request, context in
            try await signedIn(request, context) { page in
                guard let userID = context.decodedParameter("user_id") else { throw ConsolePageError.notFound }
                return try await user(page, userID: userID)
            }
        }
        admin.get("subscriptions/:original_transaction_id") { request, context in
            try await signedIn(request, context) { page in
                guard let chain = context.decodedParameter("original_transaction_id") else {
                    throw ConsolePageError.notFound
                }
                return try await subscription(page, chain: chain)
            }
        }
        admin.get("operations") { request, context in
            try await signedIn(request, context) { page in try await operations(page) }
        }
    }

    private func overview(_ page: PageRequest) async throws -> Response {
        let now = clock.now()
        let overview = try await ledger.overview(now: now, days: 30, zone: page.format.zone)
        let texts = page.texts
        var values = frame(page, title: texts["nav_overview"] ?? "", section: .overview)
        let chart = RevenueChart(
            days: RevenueChart.days(endingAt: now, count: 30, zone: page.format.zone), revenue: overview.revenue,
            channelNames: Dictionary(
                uniqueKeysWithValues: Channel.builtIn.map { ($0, texts["channel_\($0.rawValue)"] ?? $0.rawValue) }))
        values["charts"] = chart.svgs().map { ["currency": $0.currency, "svg": $0.svg] }
        values["statuses"] = OrderStatus.allCases.map { status in
            [
                "status": status.rawValue, "label": texts["status_\(status.rawValue)"] ?? status.rawValue,
                "count": overview.ordersByStatus[status] ?? 0,
            ]
                as [String: Any]
        }
        values["flaggedWaiting"] = overview.flaggedWaiting
        values["jobsDue"] = overview.jobsDue
        values["jobsLater"] = overview.jobsLater
        values["webhooksFailing"] = overview.webhooksFailing
        values["inboxFailed"] = overview.inboxFailed
        values["heldSubmissions"] = overview.heldSubmissions
        values["subscriptionGroups"] = try await ledger.subscriptionCounts(
            now: now, churnSince: now.addingTimeInterval(-30 * 86400)
        ).map { group in
            [
                "group": group.groupID, "active": group.active, "grace": group.inGracePeriod,
                "retry": group.inBillingRetry, "churned": group.churned,
            ] as [String: Any]
        }
        if let oldest = overview.oldestUnsettled {
            values["oldest"] = ["orderNo": oldest.orderNo, "created": page.format.time(oldest.createdAt)]
        }
        return views.page("overview", values)
    }

    private func orders(_ page: PageRequest) async throws -> Response {
        let parsed = try AdminOrderQuery(
            page.request.uri, zone: page.format.zone, channels: desk.channels, allowed: ["done"])
        let result = try await ledger.orders(parsed.query)
        let texts = page.texts
        var values = frame(page, title: texts["nav_orders"] ?? "", section: .orders)
        values["orders"] = result.orders.map { orderRow($0, page) }
        var filters: [String: String] = [:]
        for (name, value) in parsed.parameters { filters[name] = value }
        values["filters"] = filters
        values["statusOptions"] = OrderStatus.allCases.map { status in
            [
                "value": status.rawValue, "label": texts["status_\(status.rawValue)"] ?? status.rawValue,
                "selected": parsed.query.status == status,
            ]
                as [String: Any]
        }
        values["channelOptions"] = desk.channels.map { channel in
            [
                "value": channel.rawValue, "label": texts["channel_\(channel.rawValue)"] ?? channel.rawValue,
                "selected": parsed.query.channel == channel,
            ]
                as [String: Any]
        }
        values["isLaterPage"] = parsed.query.after != nil
        values["firstPage"] = Self.link("/admin/orders", parsed.parameters, cursor: nil)
        if let next = result.next { values["nextPage"] = Self.link("/admin/orders", parsed.parameters, cursor: next) }
        return views.page("orders", values)
    }

    /// A list's link with its filters and, for a later page, the cursor.
    static func link(_ path: String, _ parameters: [(name: String, value: String)], cursor: OrderCursor?) -> String {
        let allowed = CharacterSet.alphanumerics.union(.init(charactersIn: "-._~"))
        var pairs = parameters.map {
            "\($0.name)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }
        if let cursor { pairs.append("cursor=\(cursor)") }
        return pairs.isEmpty ? path : path + "?" + pairs.joined(separator: "&")
    }

    /// One order as the lists and the order page show it.
    func orderRow(_ order: Order, _ page: PageRequest) -> [String: Any] {
        let texts = page.texts
        return [
            "orderNo": order.orderNo, "userID": order.userID, "userPath": Self.pathSegment(order.userID),
            "productID": order.productID,
            "channel": texts["channel_\(order.channel.rawValue)"] ?? order.channel.rawValue,
            "status": texts["status_\(order.status.rawValue)"] ?? order.status.rawValue,
            "statusCode": order.status.rawValue,
            "amount": ConsoleFormat.money(order.amount), "created": page.format.time(order.createdAt),
            "updated": page.format.time(order.updatedAt), "uuid": order.orderUUID.uuidString.lowercased(),
            "sandbox": order.sandbox,
        ]
    }

    /// "Events 201–400 of 4,001" with links to the pages before and after, when there is more than one page.
    private func eventsPager(_ dossier: OrderDossier, orderNo: String, texts: [String: String]) -> [String: Any]? {
        let size = OrderDossier.eventsPerPage
        guard dossier.eventCount > size || dossier.eventsFrom > 0 else { return nil }
        let base = "/admin/orders/\(Self.pathSegment(orderNo))"
        var pager: [String: Any] = [
            "shown": (texts["events_shown"] ?? "%1$@–%2$@ / %3$@")
                .replacingOccurrences(of: "%1$@", with: "\(min(dossier.eventsFrom + 1, dossier.eventCount))")
                .replacingOccurrences(of: "%2$@", with: "\(dossier.eventsFrom + dossier.events.count)")
                .replacingOccurrences(of: "%3$@", with: "\(dossier.eventCount)")
        ]
        if dossier.eventsFrom > 0 { pager["earlier"] = base + "?events_from=\(max(dossier.eventsFrom - size, 0))" }
        if dossier.eventsFrom + size < dossier.eventCount {
            pager["later"] = base + "?events_from=\(dossier.eventsFrom + size)"
        }
        return pager
    }

    static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~"))) ?? ""
    }

    private func order(_ page: PageRequest, orderNo: String) async throws -> Response {
        let from = try EventsPageQuery.eventsFrom(page.request.uri, allowed: ["done"])
        guard orderNo.utf8.count <= 64, let dossier = try await ledger.dossier(orderNo: orderNo, eventsFrom: from)
        else {
            throw ConsolePageError.notFound
        }
        let texts = page.texts
        let format = page.format
        var values = frame(page, title: "\(texts["order_no"] ?? "") \(orderNo)", section: .orders)
        values["order"] = orderRow(dossier.order, page)
        values["flagWaiting"] = dossier.flagWaiting
        values["refundable"] =
            desk.refunds.refunds(dossier.order.channel) && dossier.payments.contains { $0.reversedAt == nil }
        values["queryable"] = desk.reconciler.queries(dossier.order.channel)
        values["events"] = dossier.events.map { event in
            // Only the keys that have a value: a section over an absent key is skipped, over an empty one it is not.
            var row: [String: Any] = [
                "at": format.time(event.createdAt), "kind": event.kind.rawValue,
                "kindClass": String(event.kind.rawValue.prefix { $0.isLetter || $0 == "_" }),
                "cause": event.cause.rawValue,
            ]
            if let to = event.toStatus {
                row["change"] =
                    (event.fromStatus.map { (texts["status_\($0.rawValue)"] ?? $0.rawValue) + " → " } ?? "→ ")
                    + (texts["status_\(to.rawValue)"] ?? to.rawValue)
            }
            if let evidence = event.evidence { row["evidence"] = evidence }
            if let note = event.note { row["note"] = note }
            return row
        }
        values["eventsPager"] = eventsPager(dossier, orderNo: orderNo, texts: texts)
        values["payments"] = dossier.payments.map { payment in
            [
                "channel": texts["channel_\(payment.channel.rawValue)"] ?? payment.channel.rawValue,
                "transaction": payment.providerTransactionID,
                "original": payment.originalTransactionID ?? "", "amount": ConsoleFormat.money(payment.amount),
                "cause": payment.cause.rawValue,
                "recorded": format.time(payment.recordedAt), "reversal": payment.reversal?.rawValue ?? "",
                "reversed": format.time(payment.reversedAt) ?? "",
            ] as [String: Any]
        }
        if !dossier.conflicts.isEmpty {
            values["hasConflicts"] = true
            values["conflicts"] = dossier.conflicts.map { conflict in
                [
                    "channel": texts["channel_\(conflict.channel.rawValue)"] ?? conflict.channel.rawValue,
                    "transaction": conflict.providerTransactionID, "claiming": conflict.claimingOrderNo,
                    "claimingPath": Self.pathSegment(conflict.claimingOrderNo), "recorded": conflict.recordedOrderNo,
                    "recordedPath": Self.pathSegment(conflict.recordedOrderNo),
                    "amount": ConsoleFormat.money(conflict.amount),
                    "evidence": conflict.evidence, "at": format.time(conflict.createdAt),
                ] as [String: Any]
            }
        }
        values["grants"] = dossier.grants.map { grant in
            [
                "transaction": grant.providerTransactionID, "kind": grant.kind.rawValue, "target": grant.target,
                "amount": grant.amount.map(String.init) ?? (grant.period ?? ""),
                "expires": format.time(grant.expiresAt) ?? "",
                "reversed": format.time(grant.reversedAt) ?? "",
            ] as [String: Any]
        }
        values["signals"] = dossier.signals.map { signal in
            [
                "id": signal.id, "channel": texts["channel_\(signal.channel.rawValue)"] ?? signal.channel.rawValue,
                "kind": signal.kind.rawValue,
                "received": format.time(signal.receivedAt), "processed": format.time(signal.processedAt) ?? "",
                "attempts": signal.attempts,
                "verdict": signal.verdict?.rawValue ?? "", "lastError": signal.lastError ?? "",
                "sha": String(signal.bodySHA256.prefix(16)),
                "bytes": signal.bodyBytes,
            ] as [String: Any]
        }
        values["webhooksKept"] = webhooksConfigured
        values["webhooks"] = dossier.webhooks.map { webhook in
            [
                "eventID": webhook.eventID, "type": webhook.type.rawValue, "created": format.time(webhook.createdAt),
                "attempts": webhook.attempts,
                "delivered": format.time(webhook.deliveredAt) ?? "", "lastError": webhook.lastError ?? "",
            ] as [String: Any]
        }
        return views.page("order", values)
    }

    private func refundConfirmation(_ page: PageRequest, orderNo: String) async throws -> Response {
        guard orderNo.utf8.count <= 64, let order = try await ledger.order(number: orderNo) else {
            throw ConsolePageError.notFound
        }
        var values = frame(page, title: page.texts["refund_confirm_title"] ?? "", section: .orders)
        values["order"] = orderRow(order, page)
        return views.page("refund", values)
    }

    private func user(_ page: PageRequest, userID: String) async throws -> Response {
        guard (1...128).contains(userID.utf8.count) else { throw ConsolePageError.notFound }
        let parsed = try AdminOrderQuery(
            page.request.uri, zone: page.format.zone, channels: desk.channels, allowed: ["done"])
        var query = parsed.query
        query.userID = userID
        let holdings = try await ledger.holdings(userID: userID, at: clock.now())
        let result = try await ledger.orders(query)
        let texts = page.texts
        var values = frame(page, title: "\(texts["user"] ?? "") \(userID)", section: .orders)
        values["userID"] = userID
        values["balances"] = holdings.balances.map { ["name": $0.name, "amount": $0.amount] as [String: Any] }
        values["entitlements"] = holdings.entitlements.map { entitlement in
            [
                "name": entitlement.name, "expires": page.format.time(entitlement.expiresAt) ?? texts["never"] ?? "",
                "state": (entitlement.active ? texts["active"] : texts["lapsed"]) ?? "",
            ] as [String: Any]
        }
        values["subscriptions"] = try await subscriptions.of(userID: userID).subscriptions.map { subscription in
            var renewal = texts["does_not_renew"] ?? ""
            if subscription.autoRenew != false, let product = subscription.renewalProductID {
                renewal = "\(texts["renews_to"] ?? "") \(product)"
            }
            var row: [String: Any] = [
                "group": subscription.groupID, "product": subscription.productID,
                "state": texts["subscription_\(subscription.state.rawValue)"] ?? subscription.state.rawValue,
                "expires": page.format.time(subscription.expiresAt) ?? "", "renewal": renewal,
            ]
            row["reason"] = subscription.expirationReason?.rawValue
            row["graceUntil"] = page.format.time(subscription.gracePeriodEndsAt)
            row["timeline"] = "/admin/subscriptions/\(Self.pathSegment(subscription.originalTransactionID))"
            return row
        }
        values["orders"] = result.orders.map { orderRow($0, page) }
        if let next = result.next {
            values["nextPage"] = Self.link("/admin/users/\(Self.pathSegment(userID))", parsed.parameters, cursor: next)
        }
        return views.page("user", values)
    }

    /// One subscription's timeline: every event of every order of its chain (its periods, state changes,
    /// notifications), oldest first.
    private func subscription(_ page: PageRequest, chain: String) async throws -> Response {
        guard (1...64).contains(chain.utf8.count) else { throw ConsolePageError.notFound }
        let entries = try await ledger.subscriptionTimeline(chain: chain)
        guard !entries.isEmpty else { throw ConsolePageError.notFound }
        var values = frame(page, title: "\(page.texts["subscription"] ?? "") \(chain)", section: .orders)
        values["chain"] = chain
        values["entries"] = entries.map { entry in
            [
                "orderNo": entry.orderNo, "orderLink": "/admin/orders/\(Self.pathSegment(entry.orderNo))",
                "kind": entry.kind.rawValue, "evidence": entry.evidence ?? "", "at": page.format.time(entry.at),
            ] as [String: Any]
        }
        values["truncated"] = entries.count >= SubscriptionTimelineEntry.maxEntries
        return views.page("subscription", values)
    }

    private func operations(_ page: PageRequest) async throws -> Response {
        let now = clock.now()
        let format = page.format
        var values = frame(page, title: page.texts["nav_operations"] ?? "", section: .operations)
        values["jobs"] = try await ledger.queuedJobs(limit: 100).map { job in
            var row: [String: Any] = [
                "kind": job.kind.rawValue, "key": job.key, "runAt": format.time(job.runAt), "due": job.runAt <= now,
                "attempts": job.attempts,
                "lease": job.leaseOwner.map { owner in "\(owner) → \(format.time(job.leaseUntil) ?? "")" } ?? "",
                "lastError": job.lastError ?? "",
            ]
            if job.kind == .queryOrder { row["orderKey"] = job.key }
            return row
        }
        let held = try await ledger.heldSubmissionCount()
        if held > 0 { values["held"] = ["count": held, "channels": desk.heldChannels.map(\.rawValue)] }
        if let status = backups?.status {
            var backup: [String: Any] = ["overdue": status.overdue]
            if let last = status.last {
                backup["last"] = [
                    "file": last.file, "at": format.time(last.createdAt) as String, "orders": last.orders,
                    "lastEvent": last.lastEventID, "bytes": last.bytes,
                ]
            }
            if let failure = status.failure {
                backup["failure"] = ["at": format.time(failure.at) as String, "reason": failure.reason]
            }
            values["backup"] = backup
        }
        values["inbox"] = try await ledger.inboxProblems(limit: 100).map { entry in
            [
                "id": entry.id, "channel": entry.channel.rawValue, "kind": entry.kind.rawValue,
                "received": format.time(entry.receivedAt),
                "attempts": entry.attempts, "verdict": entry.verdict?.rawValue ?? "",
                "lastError": entry.lastError ?? "",
                "replayable": entry.kind == .notify && desk.reconciler.replays(entry.channel),
            ] as [String: Any]
        }
        values["deliveries"] = try await ledger.webhookAttempts(limit: 100).map { attempt in
            var row: [String: Any] = [
                "eventID": attempt.eventID, "type": attempt.type.rawValue, "attempt": attempt.attempt,
                "at": format.time(attempt.attemptedAt),
                "statusCode": attempt.statusCode.map(String.init) ?? "—", "duration": "\(attempt.durationMS) ms",
                "error": attempt.error ?? "",
            ]
            if let orderNo = attempt.orderNo { row["orderNo"] = orderNo }
            return row
        }
        values["actions"] = try await ledger.operatorActions(limit: 50).map { action in
            [
                "at": format.time(action.at), "operatorName": action.operatorName, "action": action.action.rawValue,
                "target": action.target ?? "",
                "detail": action.detail ?? "",
            ] as [String: Any]
        }
        return views.page("operations", values)
    }
}
