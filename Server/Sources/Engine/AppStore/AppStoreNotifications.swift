import AppStore
import ChannelSupport
import Foundation
import Ledger
import OrderSafeModel

extension AppStorePayments {
    /// What to answer the App Store: 200 stops its retries; anything else makes it try again (up to five times
    /// over three days).
    public enum Reply: Sendable, Equatable {
        case accepted
        case refused(status: Int, message: String)
    }

    /// Handles one Server Notification V2 exactly as received: verified, then stored with what it records in one
    /// write (``Inbox``). Nothing is acknowledged before it is stored.
    public func handleNotification(body: [UInt8]) async throws -> Reply {
        try await handleNotification(body: body, applyingChain: nil)
    }

    /// `applyingChain`: the chain whose waiting notifications are being applied (this is one of them).
    func handleNotification(body: [UInt8], applyingChain: String?) async throws -> Reply {
        let refusal = try await Inbox(context: context.narrowed { $0 }).notification(
            .appStore, headers: [:], body: body, verify: { try await self.verified(notificationBody: body) },
            apply: { notification, id, write in
                try await self.apply(
                    notification, inboxID: id, in: RecordingScope(write: write, applyingChain: applyingChain))
            })
        return refusal.map { .refused(status: $0.status, message: $0.message) } ?? .accepted
    }

    /// The notification, verified; what must reach Apple before it is applied (the answer to a consumption request)
    /// is sent here, outside the write.
    private func verified(notificationBody body: [UInt8]) async throws -> AppStoreNotification {
        let signedPayload: String
        do {
            signedPayload = try JSONObject(body).string("signedPayload")
        } catch {
            throw Refusal(
                status: 400, message: "the body is not {\"signedPayload\": …}: \(error)", unauthenticated: true)
        }
        let notification: AppStoreNotification
        do {
            notification = try await verifier.verifyNotification(signedPayload)
        } catch .retryableVerificationFailure(let reason) {
            throw Refusal(status: 503, message: reason)
        } catch {
            // Apple's, but this server's settings (bundle or app id, environment, roots) cannot verify it: a refund
            // told now must not be lost to a typo. Held as a submission is, and applied by the operator's replay.
            guard Self.dependsOnSettings(error, anchored: { verifier.chainAnchorsInKnownRoot(signedPayload) }) else {
                throw Refusal(status: 401, message: error.description, unauthenticated: true)
            }
            reportHeld(error.description, userID: "(App Store notification)", kept: true)
            throw Refusal(status: 503, message: error.description, held: true)
        }
        if notification.type == .consumptionRequest, let transaction = notification.transaction,
            let purchase = AppStorePurchase(transaction)
        {
            try await answerConsumptionRequest(purchase)
        }
        return notification
    }

    /// Applies a verified notification through the write it is stored in; returns a note to keep on the inbox entry
    /// when it was accepted but could not be applied yet (an unbound transaction the app will submit).
    private func apply(_ notification: AppStoreNotification, inboxID: Int64, in scope: RecordingScope) async throws
        -> String?
    {
        // What it says of a subscription's state, whatever else it does (kept again, harmlessly, on a retry); a change
        // it makes is announced once its payment is recorded.
        let signals = SubscriptionSignals.of(notification)
        let before = try await subscription(chain: signals.first?.chain, in: scope.write)
        for signal in signals {
            try await scope.write.recordSubscriptionSignal(signal)
        }
        let note = try await applyVerified(notification, inboxID: inboxID, in: scope)
        let evidence = ["inbox:\(inboxID)", notification.notificationType, notification.subtype].compactMap { $0 }
        try await announceChange(
            of: signals.first?.chain, from: before, cause: .notification, evidence: evidence.joined(separator: " "),
            in: scope.write)
        return note
    }

    /// Applies a verified notification to the payments it concerns.
    private func applyVerified(_ notification: AppStoreNotification, inboxID: Int64, in scope: RecordingScope)
        async throws -> String?
    {
        let evidence = "inbox:\(inboxID)"
        let type = NotificationType(rawValue: notification.notificationType)
        guard let transaction = notification.transaction, let purchase = AppStorePurchase(transaction) else {
            context.logger.info(
                "appstore notification stored",
                metadata: ["inbox_id": "\(inboxID)", "type": "\(notification.notificationType)"])
            return nil
        }
        switch type {
        case .oneTimeCharge, .subscribed, .didRenew, .offerRedeemed, .renewalExtended:
            return try await recordOrAwait(purchase, notification: notification, inboxID: inboxID, in: scope)
        case .didChangeRenewalPref where notification.subtype == NotificationSubtype.upgrade.rawValue:
            // An upgrade takes effect at once: the notification carries the new period's transaction, paid now
            // ("the upgrade goes into effect immediately, starting a new billing period", Apple's
            // notificationType DID_CHANGE_RENEWAL_PREF); a downgrade's comes with the next DID_RENEW.
            return try await recordOrAwait(purchase, notification: notification, inboxID: inboxID, in: scope)
        case .refund, .revoke:
            let outcome = try await scope.write.reverse(
                Reversal(
                    channel: .appStore, providerTransactionID: purchase.transactionID,
                    kind: type == .refund ? .refunded : .revoked,
                    cause: .notification, evidence: evidence),
                at: context.clock.now())
            context.logger.notice(
                "appstore reversal", metadata: ["transaction_id": "\(purchase.transactionID)", "outcome": "\(outcome)"])
            // Not recorded yet: the reversal waits in the ledger. The notification carries the whole transaction, so
            // when its chain has an owner it is recorded now, and the waiting reversal takes it back in that same
            // step; the ledger then shows it paid and refunded.
            if outcome == .unknownPayment {
                var paid = purchase
                paid.revoked = false
                return try await recordOrAwait(paid, notification: notification, inboxID: inboxID, in: scope)
            }
        case .consumptionRequest:
            // Answered to Apple before it was stored (``verified(notificationBody:)``); noted on its order here.
            if let recorded = try await scope.write.payment(
                channel: .appStore, providerTransactionID: purchase.transactionID)
            {
                try await scope.write.note(
                    orderNo: recorded.orderNo, kind: .appStore("consumption_request"), cause: .notification,
                    evidence: evidence, at: context.clock.now())
            }
        case .refundReversed:
            let order = try await scope.write.reinstate(
                channel: .appStore, providerTransactionID: purchase.transactionID, cause: .notification,
                evidence: evidence, at: context.clock.now())
            context.logger.notice(
                "appstore refund reversed",
                metadata: ["transaction_id": "\(purchase.transactionID)", "order_no": "\(order?.orderNo ?? "-")"])
        default:
            if let recorded = try await scope.write.payment(
                channel: .appStore, providerTransactionID: purchase.transactionID)
            {
                try await scope.write.note(
                    orderNo: recorded.orderNo, kind: .appStore(notification.notificationType),
                    cause: .notification,
                    evidence: [evidence, notification.subtype].compactMap { $0 }.joined(separator: " "),
                    at: context.clock.now())
            }
        }
        return nil
    }

    /// Records a purchase a notification reported; one that names no order and belongs to no owned chain waits in
    /// the inbox until its chain gains an owner (the app submits any transaction of it).
    private func recordOrAwait(
        _ purchase: AppStorePurchase, notification: AppStoreNotification, inboxID: Int64, in scope: RecordingScope
    ) async throws -> String? {
        do {
            _ = try await record(
                purchase, submitter: nil, cause: .notification, evidence: "inbox:\(inboxID)", in: scope)
            return nil
        } catch AppStoreSubmissionError.unbound(let id) {
            if !purchase.familyShared {
                try await scope.write.awaitChain(
                    inboxID: inboxID, chain: purchase.originalTransactionID, signedAt: notification.signedDate)
            }
            return "unbound: transaction \(id) waits for its subscription to have an owner"
        } catch AppStoreSubmissionError.productNotInCatalog(let id) {
            throw Refusal(status: 500, message: "no catalog product for \(id)")
        }
    }

    /// Tells Apple, for a refund request it is deciding, whether the purchase was delivered — only when the merchant
    /// says its users consented (`customerConsented` is required). The rest of the fields are left undeclared. A
    /// failure refuses the notification, which is kept and tried again.
    private func answerConsumptionRequest(_ purchase: AppStorePurchase) async throws {
        guard answersConsumptionRequests, let api else { return }
        var order: Order?
        if let recorded = try await context.ledger.payment(
            channel: .appStore, providerTransactionID: purchase.transactionID)
        {
            order = try await context.ledger.order(number: recorded.orderNo)
        }
        let delivered = order?.status == .fulfilled
        let json = """
            {"accountTenure":0,"appAccountToken":\(JSONString.encode(order?.orderUUID.uuidString.lowercased() ?? "")),"consumptionStatus":0,\
            "customerConsented":true,"deliveryStatus":\(delivered ? 0 : 5),"lifetimeDollarsPurchased":0,"lifetimeDollarsRefunded":0,\
            "platform":1,"playTime":0,"refundPreference":0,"sampleContentProvided":false,"userStatus":0}
            """
        do {
            try await api.sendConsumptionInformation(transactionID: purchase.transactionID, json: json)
        } catch {
            throw Refusal(status: 503, message: "consumption information not sent, retry: \(error)")
        }
    }
}
