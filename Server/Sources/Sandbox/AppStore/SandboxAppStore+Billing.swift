import AppStore
import AsyncHTTPClient
import ChannelSupport
import Foundation
import NIOCore

extension SandboxAppStore {
    /// Posts one App Store Server Notification (its body, `{"signedPayload": …}`); true when the merchant took it.
    public typealias NotificationSink = @Sendable (_ body: String) async -> Bool

    /// Posts every notification from now on to `url` as Apple's sandbox does: once, answered 200–206 or lost ("in
    /// the sandbox environment, the App Store server attempts to send the notification one time":
    /// https://developer.apple.com/documentation/appstoreservernotifications/responding-to-app-store-server-notifications);
    /// a lost one stays in the notification history the merchant pulls.
    public func postNotifications(to url: String, client: HTTPClient = .notifications) {
        notificationSink = { body in
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            guard let response = try? await client.execute(request, timeout: .seconds(10)) else { return false }
            _ = try? await response.body.collect(upTo: 4096)
            return (200...206).contains(response.status.code)
        }
    }

    /// Sends notifications somewhere other than over HTTP (tests drop, duplicate and reorder them); nil: none.
    public func setNotificationSink(_ sink: NotificationSink?) {
        notificationSink = sink
    }

    /// How many notifications may wait to be posted, and how many are posted at once.
    static let outboxLimit = 1024
    static let postersAtOnce = 4

    /// Posts a notification once, as Apple's sandbox does, without waiting for it: from a queue of at most
    /// ``outboxLimit``, ``postersAtOnce`` at a time. One made while the queue is full (the merchant's server takes
    /// them slower than the store sells) is not delivered, as when Apple's post times out: it stays in the notification
    /// history, which the merchant's server reads, and is counted (``undeliveredNotifications``). The store's memory
    /// never grows with a merchant that cannot keep up.
    func post(_ signedPayload: String) {
        guard let sink = notificationSink else { return }
        let queue = outbox ?? Self.outbox(posting: sink)
        outbox = queue
        if case .dropped = queue.yield(#"{"signedPayload":\#(JSONString.encode(signedPayload))}"#) {
            undeliveredNotifications += 1
        }
    }

    private static func outbox(posting sink: @escaping NotificationSink) -> AsyncStream<String>.Continuation {
        let (queue, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingOldest(outboxLimit))
        Task {
            await withTaskGroup(of: Void.self) { group in
                var posting = 0
                for await body in queue {
                    if posting == postersAtOnce {
                        await group.next()
                        posting -= 1
                    }
                    group.addTask { _ = await sink(body) }
                    posting += 1
                }
            }
        }
        return continuation
    }

    /// The next billing of subscription `original` fails, with a grace period of `graceDays` (0: none), as a card
    /// that expires before the renewal date: the billing run then announces `DID_FAIL_TO_RENEW`.
    public func failNextBilling(_ original: String, graceDays: Int) throws {
        guard records.periodEnds[original] != nil else { throw SandboxAppStoreError.unknownTransaction(original) }
        guard (0...60).contains(graceDays) else { throw SandboxAppStoreError.badEvent("grace_days \(graceDays)") }
        failingBills[original] = graceDays
    }

    /// The subscriber fixes their payment method while subscription `original` is in billing retry: the App Store
    /// bills at once, a new period starts now (`DID_RENEW` `BILLING_RECOVERY`). Returns the notification.
    @discardableResult
    public func recoverBilling(_ original: String) throws -> String {
        let (product, fields) = try chain(original)
        guard fields["isInBillingRetryPeriod"] as? Bool == true else { throw SandboxAppStoreError.notBilled(original) }
        return try renew(original, to: fields["autoRenewProductId"] as? String ?? product, start: nil)
    }

    /// The subscriber moves subscription `original` up to `productID`, a higher level of its group: the upgrade
    /// takes effect at once, the current period is marked `isUpgraded` (Apple refunds its unused part) and a new
    /// period of `productID` starts now (`DID_CHANGE_RENEWAL_PREF` `UPGRADE`). Returns the notification.
    @discardableResult
    public func upgrade(_ original: String, to productID: String) throws -> String {
        _ = try chain(original)
        guard let latest = try transactions(ofChain: original)?.last, var payload = try payload(of: latest) else {
            throw SandboxAppStoreError.unknownTransaction(original)
        }
        payload["isUpgraded"] = true
        payload["signedDate"] = Self.milliseconds(clock.now())
        let (signed, json) = try signedJSON(payload)
        try keep(KeptTransaction(id: latest, signed: signed, payload: json, original: original))
        return try renew(original, to: productID, start: .upgrade)
    }

    /// The subscriber buys subscription `original`'s group again after it expired (a win-back, with or without an
    /// offer): a new period of `productID` on the same original transaction (`SUBSCRIBED` `RESUBSCRIBE`), bound to
    /// `appAccountToken`, with the server-signed `offer` if one is taken. Returns the transaction id and the
    /// notification.
    public func resubscribe(_ original: String, to productID: String, appAccountToken: UUID?, offer: String? = nil)
        throws
        -> (transactionID: String, notification: String)
    {
        let (_, fields) = try chain(original)
        guard fields["expirationIntent"] != nil else { throw SandboxAppStoreError.stillRenews(original) }
        let (id, _) = try purchase(
            productID: productID, type: Self.autoRenewable, appAccountToken: appAccountToken,
            originalTransactionID: original, subscriptionPeriod: nil, familyShared: false, offerCode: nil,
            promotionalOffer: offer, device: nil, start: nil)
        return (id, latestNotification ?? "")
    }

    /// The status of subscription `original` as the App Store itself knows it now, in Apple's codes (Get All
    /// Subscription Statuses, `status`: 1 active, 2 expired, 3 in billing retry, 4 in billing grace period, 5
    /// revoked): what a merchant's ledger must converge to, however its notifications arrived.
    public func status(of original: String) throws -> Int {
        let (_, fields) = try chain(original)
        guard let latest = try transactions(ofChain: original)?.last, let end = records.periodEnds[original] else {
            throw SandboxAppStoreError.unknownTransaction(original)
        }
        let now = Self.milliseconds(clock.now())
        if try payload(of: latest)?["revocationDate"] != nil { return 5 }
        if fields["expirationIntent"] != nil { return 2 }
        if fields["isInBillingRetryPeriod"] as? Bool == true {
            if let grace = Self.milliseconds(fields["gracePeriodExpiresDate"]), grace > now { return 4 }
            return 3
        }
        // The period ended and the billing run has not renewed it yet: Apple renews ahead; the sandbox at its
        // next run. Until then the period that ended is what there is.
        return Self.milliseconds(end) > now ? 1 : 2
    }

    /// The renewal information of subscription `original` as it stands now, signed (what StoreKit's
    /// `Product.SubscriptionInfo.Status.renewalInfo` carries).
    public func currentRenewalInfo(of original: String) throws -> String {
        try sign(try chain(original).fields)
    }

    /// The latest transaction of chain `original`, signed.
    public func latestSignedTransaction(of original: String) throws -> String? {
        guard let latest = try transactions(ofChain: original)?.last else { return nil }
        return try kept(latest)?.signed
    }

    /// The latest transaction of chain `original`.
    public func latestTransaction(of original: String) throws -> String? {
        try transactions(ofChain: original)?.last
    }

    /// The App Store's billing run at the clock's time: every subscription whose period has ended renews (to its
    /// renewal product), fails to bill (``failNextBilling(_:graceDays:)``), ends its grace period, or expires —
    /// auto-renew off (`VOLUNTARY`), or billing never recovered within the retry period (`BILLING_RETRY`). A
    /// subscription whose latest period was refunded renews no more. Returns the notifications made, oldest first
    /// (each also posted, and kept in the notification history).
    @discardableResult
    public func renewDue() throws -> [String] {
        var made: [String] = []
        for original in records.periodEnds.keys.sorted() {
            made += try bill(original)
        }
        return made
    }

    /// Apple's billing retry period: 60 days (at the store's renewal rate).
    static let billingRetryDays = 60
    /// At most this many periods renew in one run, as Apple's sandbox caps renewals.
    static let renewalsPerRun = 12
    static let autoRenewable = ProductType.autoRenewableSubscription.rawValue

    private func bill(_ original: String) throws -> [String] {
        var made: [String] = []
        for _ in 0..<Self.renewalsPerRun {
            let now = clock.now()
            guard let end = records.periodEnds[original], end <= now,
                let latest = try transactions(ofChain: original)?.last,
                try payload(of: latest)?["revocationDate"] == nil,
                let (product, fields) = try? chain(original), fields["expirationIntent"] == nil
            else { break }
            let renews = fields["autoRenewStatus"] as? Int != 0
            if fields["isInBillingRetryPeriod"] as? Bool == true {
                if now >= end.addingTimeInterval(renewalRate.duration(days: Self.billingRetryDays)) {
                    made.append(try subscription(original, .expires))
                } else if let grace = Self.milliseconds(fields["gracePeriodExpiresDate"]),
                    grace <= Self.milliseconds(now), graceEndsAnnounced.insert(original).inserted
                {
                    made.append(try announceGraceEnd(original, fields: fields))
                }
                break
            }
            guard renews else {
                made.append(try subscription(original, .expires))
                break
            }
            if let graceDays = failingBills.removeValue(forKey: original) {
                graceEndsAnnounced.remove(original)
                made.append(try subscription(original, .billingFails(graceDays: graceDays)))
                break
            }
            made.append(
                try renew(original, to: fields["autoRenewProductId"] as? String ?? product, start: .lastPeriodEnd))
        }
        return made
    }

    /// A date field of a payload in milliseconds, as made here (`Int64`) or read back from JSON.
    static func milliseconds(_ value: Any?) -> Int64? {
        switch value {
        case let value as Int64: value
        case let value as Int: Int64(value)
        case let value as NSNumber: value.int64Value
        default: nil
        }
    }

    /// `GRACE_PERIOD_EXPIRED`: the grace period ended and billing has not recovered (the subscriber loses access;
    /// the App Store keeps retrying).
    private func announceGraceEnd(_ original: String, fields: [String: Any]) throws -> String {
        var renewal = fields
        renewal["signedDate"] = Self.milliseconds(clock.now())
        return try announce("GRACE_PERIOD_EXPIRED", original: original, renewal: renewal)
    }

    /// A new period of `productID` on chain `original`, with its token; returns its notification.
    private func renew(_ original: String, to productID: String, start: PeriodStart?) throws -> String {
        _ = try purchase(
            productID: productID, type: Self.autoRenewable, appAccountToken: records.chainTokens[original],
            originalTransactionID: original, subscriptionPeriod: nil, familyShared: false, offerCode: nil,
            device: nil, start: start)
        return latestNotification ?? ""
    }

    /// The product of chain `original`'s latest period and its renewal information now.
    private func chain(_ original: String) throws -> (product: String, fields: [String: Any]) {
        guard let latest = try transactions(ofChain: original)?.last, records.periodEnds[original] != nil,
            let product = try payload(of: latest)?["productId"] as? String
        else { throw SandboxAppStoreError.unknownTransaction(original) }
        return (product, renewalFields(original: original, productID: product))
    }
}
