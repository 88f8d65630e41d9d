import ChannelSupport
import Foundation
import OrderSafeModel

/// The merchant's word on an offer whose rule asks for it (`ask_merchant`): a signed POST to the merchant's backend
/// (the webhooks' `OrderSafe-Signature`, over the raw body) that must answer `200 {"allow": true}` within its
/// timeout. Anything else — `{"allow": false}`, another status, a body that does not say, no answer in time — is no:
/// an offer is a discount, and silence gives none.
public struct MerchantOfferHook: Sendable {
    let url: String
    let secret: String
    let timeout: Duration
    let transport: any ProviderTransport
    let clock: any WallClock

    public init(url: String, secret: String, timeout: Duration, transport: any ProviderTransport, clock: any WallClock)
    {
        self.url = url
        self.secret = secret
        self.timeout = timeout
        self.transport = transport
        self.clock = clock
    }

    /// What the merchant was asked about.
    public struct Question: Sendable, Hashable {
        public var userID: String
        public var orderNo: String
        /// The catalog's product id, and the App Store's.
        public var productID: String
        public var appStoreProductID: String
        public var offerID: String
        /// `promotional` or `win_back`.
        public var offerKind: String
        public var audience: OfferAudience
    }

    /// The merchant's answer.
    public enum Answer: Sendable, Hashable {
        case yes
        case no
        /// No answer that says yes or no: why.
        case silent(String)
    }

    public func ask(_ question: Question) async -> Answer {
        let body = Array(
            JSONString.object([
                ("type", "offer.eligibility"), ("user_id", question.userID), ("order_no", question.orderNo),
                ("product_id", question.productID), ("app_store_product_id", question.appStoreProductID),
                ("offer_id", question.offerID), ("offer_kind", question.offerKind),
                ("audience", question.audience.rawValue),
            ]).utf8)
        let headers = [
            "Content-Type": "application/json", "User-Agent": "OrderSafe-Offers/1",
            WebhookSignature.headerName: WebhookSignature.header(
                secret: secret, body: body, timestamp: Int64(clock.now().timeIntervalSince1970)),
        ]
        let response: ProviderHTTPResponse
        do {
            response = try await transport.send(
                method: "POST", url: url, headers: headers, body: body, timeout: timeout)
        } catch {
            return .silent("no answer (\(error))")
        }
        guard response.status == 200 else { return .silent("HTTP \(response.status)") }
        guard let allow = try? JSONObject(response.body).optionalBool("allow") else {
            return .silent(#"the answer does not say {"allow": true|false}"#)
        }
        return allow ? .yes : .no
    }
}
