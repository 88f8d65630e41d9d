import AppStore
import ChannelSupport
import Crypto
import Foundation
import OrderSafeModel

/// The App Store Server Notifications V2 the store signs and sends, and the subscription events that cause them.
extension SandboxAppStore {
    /// The subscription group of an auto-renewable product whose group was not set up (``setSubscriptionGroups(_:)``;
    /// the server sets its catalog's), and of every subscription `ordersafe sandbox mint` signs.
    public static let subscriptionGroup = "21000001"

    /// A signed V2 notification carrying `signedTransaction` and `signedRenewalInfo` (what the App Store would POST
    /// to the merchant).
    public func notification(
        type: String, subtype: String? = nil, signedTransaction: String?, signedRenewalInfo: String? = nil
    ) throws -> String {
        // Written as JSONSerialization would with sorted keys, without its cost on the nested JWS (kilobytes each).
        var data = [
            #""appAppleId":\#(appAppleID)"#, #""bundleId":\#(JSONString.encode(bundleID))"#, #""bundleVersion":"1""#,
            #""environment":"Sandbox""#,
        ]
        if let signedRenewalInfo { data.append(#""signedRenewalInfo":\#(JSONString.encode(signedRenewalInfo))"#) }
        if let signedTransaction { data.append(#""signedTransactionInfo":\#(JSONString.encode(signedTransaction))"#) }
        var fields = [
            #""data":{\#(data.joined(separator: ","))}"#, #""notificationType":\#(JSONString.encode(type))"#,
            #""notificationUUID":"\#(UUID().uuidString.lowercased())""#,
            #""signedDate":\#(Self.milliseconds(clock.now()))"#,
        ]
        if let subtype { fields.append(#""subtype":\#(JSONString.encode(subtype))"#) }
        fields.append(#""version":"2.0""#)
        return try nextSigner().sign("{" + fields.joined(separator: ",") + "}")
    }

    /// The notification a change of a transaction makes, as the history keeps it.
    func notification(
        _ type: String, subtype: String? = nil, signedTransaction: String, signedRenewalInfo: String? = nil
    ) throws -> KeptTransaction.Notification {
        KeptTransaction.Notification(
            signedDate: Self.milliseconds(clock.now()),
            payload: try notification(
                type: type, subtype: subtype, signedTransaction: signedTransaction,
                signedRenewalInfo: signedRenewalInfo))
    }

    /// The renewal information of the subscription `original` now, unsigned: as last signed, or a new one that
    /// renews to `productID`; dated now.
    func renewalFields(original: String, productID: String) -> [String: Any] {
        var fields =
            records.renewals[original] ?? [
                "autoRenewStatus": 1, "autoRenewProductId": productID,
                "recentSubscriptionStartDate": Self.milliseconds(clock.now()),
            ]
        fields["originalTransactionId"] = original
        fields["productId"] = productID
        fields["environment"] = "Sandbox"
        fields["appTransactionId"] = "704330170000000001"
        fields["signedDate"] = Self.milliseconds(clock.now())
        return fields
    }

    /// What the subscriber or the App Store's billing does to an auto-renewable subscription between its renewals.
    public enum SubscriptionEvent: Sendable, Hashable {
        /// Turned on or off in the subscriber's settings: `DID_CHANGE_RENEWAL_STATUS` `AUTO_RENEW_ENABLED|DISABLED`.
        case autoRenew(Bool)
        /// The next period renews to another product of the group (a downgrade or crossgrade at the period's end):
        /// `DID_CHANGE_RENEWAL_PREF` `DOWNGRADE`.
        case renewsTo(String)
        /// Billing failed at the period's end, with a grace period of `graceDays` (none when 0): `DID_FAIL_TO_RENEW`
        /// (`GRACE_PERIOD`). A renewal bought after it is `DID_RENEW` `BILLING_RECOVERY`.
        case billingFails(graceDays: Int)
        /// The period ended and no renewal comes (auto-renew off, or billing never recovered): `EXPIRED`
        /// `VOLUNTARY|BILLING_RETRY`.
        case expires
    }

    /// Applies `event` to the subscription whose original transaction is `original`: its latest transaction and
    /// its renewal information as Apple then signs them, in a notification kept in the notification history (what
    /// the server's history pull reads) and returned (what Apple would POST to `/v1/notify/appstore`).
    @discardableResult
    public func subscription(_ original: String, _ event: SubscriptionEvent) throws -> String {
        guard let latest = try transactions(ofChain: original)?.last, let payload = try payload(of: latest),
            let end = records.periodEnds[original], let productID = payload["productId"] as? String
        else { throw SandboxAppStoreError.unknownTransaction(original) }
        var fields = renewalFields(original: original, productID: productID)
        let renews = fields["autoRenewStatus"] as? Int != 0
        let retrying = fields["isInBillingRetryPeriod"] as? Bool == true
        let type: String
        var subtype: String?
        switch event {
        case .autoRenew(let on):
            fields["autoRenewStatus"] = on ? 1 : 0
            (type, subtype) = ("DID_CHANGE_RENEWAL_STATUS", on ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED")
        case .renewsTo(let product):
            fields["autoRenewProductId"] = product
            (type, subtype) = ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE")
        case .billingFails(let graceDays):
            guard clock.now() >= end else { throw SandboxAppStoreError.notDue(original, end) }
            guard renews, (0...60).contains(graceDays) else { throw SandboxAppStoreError.notBilled(original) }
            fields["isInBillingRetryPeriod"] = true
            fields.removeValue(forKey: "gracePeriodExpiresDate")
            if graceDays > 0 {
                fields["gracePeriodExpiresDate"] = Self.milliseconds(
                    end.addingTimeInterval(renewalRate.duration(days: graceDays)))
            }
            (type, subtype) = ("DID_FAIL_TO_RENEW", graceDays > 0 ? "GRACE_PERIOD" : nil)
        case .expires:
            guard clock.now() >= end else { throw SandboxAppStoreError.notDue(original, end) }
            guard !renews || retrying else { throw SandboxAppStoreError.stillRenews(original) }
            fields["expirationIntent"] = retrying ? 2 : 1
            fields["isInBillingRetryPeriod"] = false
            fields["autoRenewStatus"] = 0
            fields.removeValue(forKey: "gracePeriodExpiresDate")
            (type, subtype) = ("EXPIRED", retrying ? "BILLING_RETRY" : "VOLUNTARY")
        }
        return try announce(type, subtype: subtype, original: original, renewal: fields)
    }

    /// Signs notification `type` (`subtype`) carrying chain `original`'s latest transaction and renewal information
    /// `fields`, keeps both (the notification history, the journal) and posts it; returns it.
    func announce(_ type: String, subtype: String? = nil, original: String, renewal fields: [String: Any]) throws
        -> String
    {
        guard let latest = try transactions(ofChain: original)?.last, let kept = try kept(latest) else {
            throw SandboxAppStoreError.unknownTransaction(original)
        }
        let notification = try notification(
            type, subtype: subtype, signedTransaction: kept.signed, signedRenewalInfo: try sign(fields))
        try keep(
            KeptTransaction(
                id: latest, signed: kept.signed, payload: kept.payload, original: original,
                notification: notification, renewal: try Self.encode(fields)))
        return notification.payload
    }
}
