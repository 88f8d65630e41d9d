import AppStore
import ChannelSupport
import Crypto
import Foundation
import OrderSafeModel

/// The store as the device sees it: purchases, the app receipt, refunds and renewal date extensions, each kept in
/// the journal and announced.
extension SandboxAppStore {
    /// A purchase as StoreKit 2 reports it: the signed transaction (also recorded, with its notification). An
    /// auto-renewable subscription's period (`subscriptionPeriod`, one month unless given) starts now, or for a
    /// renewal where the previous one ends, and is dated in `expiresDate`; a first period bought with its
    /// `introductoryOffer` lasts the offer's period and costs its price (a multi-period pay-as-you-go offer's later
    /// periods renew at the full price here, where Apple bills them at the offer's).
    @discardableResult
    public func purchase(
        productID: String, type: String = "Consumable", appAccountToken: UUID? = nil,
        originalTransactionID: String? = nil,
        subscriptionPeriod: GrantPeriod? = nil, familyShared: Bool = false, offerCode: String? = nil,
        promotionalOffer: String? = nil, introductoryOffer: IntroductoryOffer? = nil, device: String? = nil
    ) throws -> (transactionID: String, signed: String) {
        try purchase(
            productID: productID, type: type, appAccountToken: appAccountToken,
            originalTransactionID: originalTransactionID, subscriptionPeriod: subscriptionPeriod,
            familyShared: familyShared, offerCode: offerCode, promotionalOffer: promotionalOffer,
            introductoryOffer: introductoryOffer, device: device, start: nil)
    }

    /// ``purchase(productID:type:appAccountToken:originalTransactionID:subscriptionPeriod:familyShared:offerCode:promotionalOffer:device:)``;
    /// a subscription's period starts at `start` (the billing run renews where the last period ended; an upgrade
    /// starts now), else now or where the chain's last period ends, whichever is later.
    func purchase(
        productID: String, type: String, appAccountToken: UUID?, originalTransactionID: String?,
        subscriptionPeriod: GrantPeriod?, familyShared: Bool, offerCode: String?, promotionalOffer: String? = nil,
        introductoryOffer: IntroductoryOffer? = nil, device: String?, start: PeriodStart?
    ) throws -> (transactionID: String, signed: String) {
        let upgrade = start == .upgrade
        let id = String(nextID)
        nextID += 1
        let now = Self.milliseconds(clock.now())
        var expires: Date?
        var period: GrantPeriod?
        if type == Self.autoRenewable {
            let original = originalTransactionID ?? id
            let chainPeriod = subscriptionPeriod ?? records.periods[original] ?? GrantPeriod(count: 1, unit: .month)
            let latest = max(clock.now(), records.periodEnds[original] ?? clock.now())
            let from: Date =
                switch start {
                case .upgrade: clock.now()
                case .lastPeriodEnd: records.periodEnds[original] ?? clock.now()
                case nil: latest
                }
            period = chainPeriod
            expires = renewalRate.end(of: introductoryOffer?.period ?? chainPeriod, from: from)
        }
        var payload = Self.transactionPayload(
            id: id, originalTransactionID: originalTransactionID, bundleID: bundleID, productID: productID, type: type,
            at: now,
            familyShared: familyShared)
        payload["appAccountToken"] = appAccountToken?.uuidString.lowercased()
        let offer = promotionalOffer.flatMap { offers[$0] }
        let introductoryPrice = introductoryOffer.map {
            $0.price ?? Money(amountMinor: 0, currency: prices[productID]?.currency ?? .cny)
        }
        if let price = introductoryPrice ?? offer?.price ?? prices[productID] {
            // Milli-units of the storefront's currency (JWSTransactionDecodedPayload `price`: "10990 is 10.99").
            var scale: Int64 = 1
            for _ in price.currency.minorUnitDigits..<3 { scale *= 10 }
            payload["price"] = price.amountMinor * scale
            payload["currency"] = price.currency.code
        }
        payload["expiresDate"] = expires.map(Self.milliseconds)
        if expires != nil {
            payload["subscriptionGroupIdentifier"] = subscriptionGroups[productID] ?? Self.subscriptionGroup
        }
        if let offerCode {
            // Apple's `offerType` 3 is an offer code, `offerIdentifier` its reference name (App Store Server API,
            // JWSTransactionDecodedPayload `offerType`).
            payload["offerType"] = 3
            payload["offerIdentifier"] = offerCode
        } else if let introductoryOffer {
            // Apple's `offerType` 1, with how it is paid and how long it lasts (`offerDiscountType`, `offerPeriod`).
            payload["offerType"] = 1
            payload["offerDiscountType"] = introductoryOffer.paymentMode.discountType
            payload["offerPeriod"] = introductoryOffer.period.description
        } else if let promotionalOffer {
            // A promotional (2) or win-back (4) offer, by its id; its first period paid as you go, or free
            // (`offerDiscountType` FREE_TRIAL, PAY_AS_YOU_GO, PAY_UP_FRONT).
            payload["offerType"] = offer?.kind.rawValue ?? 2
            payload["offerIdentifier"] = promotionalOffer
            if let offer {
                payload["offerDiscountType"] = offer.price.amountMinor == 0 ? "FREE_TRIAL" : "PAY_AS_YOU_GO"
            }
        }
        let (signed, json) = try signedJSON(payload)
        // A subscription's notification carries its renewal information: a new period clears a billing failure
        // (Apple's DID_RENEW BILLING_RECOVERY).
        var renewal: [String: Any]?
        var notification: KeptTransaction.Notification
        if expires != nil {
            var fields = renewalFields(original: originalTransactionID ?? id, productID: productID)
            let recovered = fields["isInBillingRetryPeriod"] as? Bool == true
            // A subscription bought again after it expired (a win-back) is `SUBSCRIBED` `RESUBSCRIBE`.
            let resubscribed = fields["expirationIntent"] != nil
            for name in ["isInBillingRetryPeriod", "gracePeriodExpiresDate", "expirationIntent"] {
                fields.removeValue(forKey: name)
            }
            if upgrade || resubscribed {
                fields["autoRenewProductId"] = productID
                fields["autoRenewStatus"] = 1
            }
            renewal = fields
            let (type, subtype): (String, String?) =
                if upgrade {
                    ("DID_CHANGE_RENEWAL_PREF", "UPGRADE")
                } else if originalTransactionID == nil {
                    // An offer code's first purchase is OFFER_REDEEMED INITIAL_BUY ("the customer redeemed the offer
                    // for a first-time purchase": Apple's notificationType).
                    (offerCode == nil ? "SUBSCRIBED" : "OFFER_REDEEMED", "INITIAL_BUY")
                } else if resubscribed {
                    ("SUBSCRIBED", "RESUBSCRIBE")
                } else {
                    ("DID_RENEW", recovered ? "BILLING_RECOVERY" : nil)
                }
            notification = try self.notification(
                type, subtype: subtype, signedTransaction: signed, signedRenewalInfo: try sign(fields))
        } else {
            notification = try self.notification("ONE_TIME_CHARGE", signedTransaction: signed)
        }
        try keep(
            KeptTransaction(
                id: id, signed: signed, payload: json, token: appAccountToken,
                original: originalTransactionID ?? id,
                periodEnd: expires, period: period,
                receiptEntry: .init(
                    productID: productID, transactionID: id, originalTransactionID: originalTransactionID,
                    purchaseDate: clock.now(),
                    expiresDate: expires),
                device: device,
                notification: notification, renewal: try renewal.map(Self.encode)))
        return (id, signed)
    }

    /// Where a subscription period bought by the store itself starts.
    enum PeriodStart {
        /// Now: an upgrade, announced as `DID_CHANGE_RENEWAL_PREF` `UPGRADE`.
        case upgrade
        /// Where the chain's last period ended: a renewal billed on time.
        case lastPeriodEnd
    }

    /// The `appAccountToken` of an original transaction (a subscription's first purchase), which its renewals
    /// carry too (Apple's appAccountToken page: "the App Store returns the same UUID in Transaction.appAccountToken
    /// and renewal info"); throws when no chain starts with `transactionID`.
    func chainToken(of transactionID: String) throws -> UUID? {
        guard try transactions(ofChain: transactionID) != nil else {
            throw SandboxDeviceError.notRenewable(transactionID)
        }
        return try records.chainTokens[transactionID] ?? kept(transactionID)?.token
    }

    /// What a new transaction says, as the App Store writes it (milliseconds since 1970 in `at`).
    static func transactionPayload(
        id: String, originalTransactionID: String?, bundleID: String, productID: String, type: String, at now: Int64,
        familyShared: Bool
    ) -> [String: Any] {
        [
            "transactionId": id, "originalTransactionId": originalTransactionID ?? id, "bundleId": bundleID,
            "productId": productID,
            "purchaseDate": now, "originalPurchaseDate": now, "quantity": 1, "type": type,
            "inAppOwnershipType": (familyShared ? InAppOwnershipType.familyShared : .purchased).rawValue,
            "signedDate": now,
            "environment": "Sandbox",
            "transactionReason": originalTransactionID == nil ? "PURCHASE" : "RENEWAL",
            "storefront": "CHN", "storefrontId": "143465", "appTransactionId": "704330170000000001",
        ]
    }

    /// The transactions bought on a device, with the device, their type and their latest signed form, oldest first:
    /// what each device's StoreKit queue is rebuilt from after a restart.
    func deviceTransactions() throws -> [(id: String, device: String, type: String, signed: String)] {
        try records.purchasingDevices.compactMap { id, device in
            guard let signed = try signedTransaction(id) else { return nil }
            return (id, device, try payload(of: id)?["type"] as? String ?? "Consumable", signed)
        }.sorted { ($0.id.count, $0.id) < ($1.id.count, $1.id) }
    }

    /// Every purchase so far: the simulator's own record (read back from its journal).
    public var payments: [SandboxPaymentRecord] {
        get throws {
            var payments: [SandboxPaymentRecord] = []
            try everyLine { kept in
                guard kept.receiptEntry != nil else { return }
                payments.append(
                    SandboxPaymentRecord(
                        providerTransactionID: kept.id, orderReference: kept.token?.uuidString.lowercased(),
                        amount: nil))
            }
            return payments
        }
    }

    /// The app's StoreKit 1 receipt now: every purchase so far, signed, base64 (what `appStoreReceiptURL` holds).
    /// `bundleID` makes the receipt of another app, signed by the same authority.
    public func appReceipt(bundleID: String? = nil) throws -> String {
        var purchases: [SandboxReceiptSigner.Purchase] = []
        try everyLine { kept in kept.receiptEntry.map { purchases.append($0) } }
        let receipt = try receipts.receipt(
            bundleID: bundleID ?? self.bundleID, purchases: purchases, createdAt: clock.now())
        return Data(receipt).base64EncodedString()
    }

    /// Apple refunds a transaction: it is signed again with `revocationDate` (as the App Store then reports it to
    /// the app, the history and the notification) and a `REFUND` notification is recorded. Returns the new JWS.
    @discardableResult
    public func refund(transactionID: String) throws -> String {
        guard var payload = try payload(of: transactionID) else {
            throw SandboxAppStoreError.unknownTransaction(transactionID)
        }
        payload["revocationDate"] = Self.milliseconds(clock.now())
        payload["revocationReason"] = 0
        payload["signedDate"] = Self.milliseconds(clock.now())
        let (signed, json) = try signedJSON(payload)
        try keep(
            KeptTransaction(
                id: transactionID, signed: signed, payload: json,
                original: payload["originalTransactionId"] as? String ?? transactionID,
                notification: try notification("REFUND", signedTransaction: signed)))
        return signed
    }

    /// Apple extends a subscription's renewal date (App Store Connect or the Server API's extension): the latest
    /// transaction of `originalTransactionID` is signed again with its `expiresDate` `days` later, and a
    /// `RENEWAL_EXTENDED` notification is recorded. Returns the transaction as now signed.
    @discardableResult
    public func extendRenewalDate(originalTransactionID: String, days: Int) throws -> String {
        guard let id = try transactions(ofChain: originalTransactionID)?.last, var payload = try payload(of: id),
            let end = records.periodEnds[originalTransactionID]
        else {
            throw SandboxAppStoreError.unknownTransaction(originalTransactionID)
        }
        let extended = end.addingTimeInterval(renewalRate.duration(days: days))
        payload["expiresDate"] = Self.milliseconds(extended)
        payload["signedDate"] = Self.milliseconds(clock.now())
        let (signed, json) = try signedJSON(payload)
        try keep(
            KeptTransaction(
                id: id, signed: signed, payload: json, original: originalTransactionID,
                periodEnd: extended,
                notification: try notification("RENEWAL_EXTENDED", signedTransaction: signed)))
        return signed
    }
}
