import Foundation
import OrderSafeModel

/// Everything that can stop a purchase, restore or read, each with a message for the user in Simplified Chinese
/// and English (``message(in:)``). None of them means a payment was lost: what the store or a provider took is
/// recorded when the server can be reached.
public enum OrderSafeError: Error, Sendable, Hashable, CustomStringConvertible {
    case store(StoreFailure)
    case alipay(AlipayResult)
    case wechatPay(WeChatPayResult)
    case server(ServerProblem)
    /// The product id is not in the server's catalog.
    case productNotFound(String)
    case channelNotOffered(productID: String, channel: Channel)
    /// `AppStore.canMakePayments` is false.
    case paymentsNotAllowed
    /// No bridge was given for this channel.
    case bridgeMissing(Channel)
    /// A purchase of this product (a catalog id) by this user is on its way already (a second tap on the Buy
    /// button): no second order is made, nothing is charged; the first purchase reports its own outcome.
    case purchaseInProgress(String)
    /// The server looked at the App Store transaction and refused it for good.
    case rejected(code: String, message: String)
    /// The purchase journal cannot be written (disk full, folder not writable) or is full: no purchase starts.
    case journalUnavailable(String)
    /// Nothing of this product (a catalog id) was bought with this device's Apple ID: there is nothing to refund.
    case nothingToRefund(String)
    /// Order `orderNo` was paid through Alipay or WeChat Pay: Apple's refund sheet cannot refund it; the merchant does
    /// (the buyer asks the app's support).
    case refundedByMerchant(orderNo: String)

    /// The key of this error's text in `Localizable.strings`, and its placeholders.
    var messageKey: (key: String, values: [String: String]) {
        switch self {
        case .store(.storeKit(let kind)): ("store.\(kind.rawValue)", [:])
        case .store(.purchase(let kind)): ("purchase.\(kind.rawValue)", [:])
        case .store(.skError(let code)): ((0...21).contains(code) ? "sk.\(code)" : "sk.other", ["code": String(code)])
        case .store(.other): ("store.other", [:])
        case .store(.lookup): ("store.lookup", [:])
        case .server(.unavailable(_, "provider_unavailable")): ("server.providerUnavailable", [:])
        case .alipay(let result): (result.messageKey, ["code": result.resultStatus])
        case .wechatPay(let result): (result.messageKey, ["code": String(result.errCode)])
        case .server(.unreachable): ("server.unreachable", [:])
        case .server(.unavailable): ("server.unavailable", [:])
        case .server(.refused(_, let code, _)): ("server.refused", ["code": code])
        case .server(.malformedAnswer): ("server.malformed", [:])
        case .server(.signedOut): ("server.signedOut", [:])
        case .server(.tokenOfAnotherUser): ("server.tokenOfAnotherUser", [:])
        case .server(.userChanged): ("server.userChanged", [:])
        case .productNotFound: ("order.productNotFound", [:])
        case .channelNotOffered: ("order.channelNotOffered", [:])
        case .paymentsNotAllowed: ("order.paymentsNotAllowed", [:])
        case .bridgeMissing: ("order.bridgeMissing", [:])
        case .purchaseInProgress: ("order.purchaseInProgress", [:])
        case .rejected("transaction_revoked", _): ("order.transactionRevoked", [:])
        case .rejected("transaction_belongs_to_another_user", _): ("order.otherUser", [:])
        case .rejected(let code, _): ("order.rejected", ["code": code])
        case .journalUnavailable: ("journal.unavailable", [:])
        case .nothingToRefund: ("refund.nothingToRefund", [:])
        case .refundedByMerchant: ("refund.byMerchant", [:])
        }
    }

    /// What to show the user.
    public func message(in language: MessageLanguage = .preferred()) -> String {
        let (key, values) = messageKey
        return Messages.text(key, language, values)
    }

    public var description: String {
        switch self {
        case .store(let failure): "store: \(failure)"
        case .alipay(let result): "alipay resultStatus \(result.resultStatus)"
        case .wechatPay(let result): "wechatpay errCode \(result.errCode)"
        case .server(let problem): "\(problem)"
        case .nothingToRefund(let id): "no purchase of \(id) with this Apple ID to refund"
        case .refundedByMerchant(let orderNo): "order \(orderNo) was not paid through the App Store"
        case .productNotFound(let id): "product \(id) is not in the catalog"
        case .channelNotOffered(let id, let channel): "product \(id) is not sold through \(channel.rawValue)"
        case .paymentsNotAllowed: "payments are not allowed on this device"
        case .bridgeMissing(let channel): "no bridge configured for \(channel.rawValue)"
        case .purchaseInProgress(let id): "a purchase of \(id) is on its way already"
        case .rejected(let code, let message): "rejected (\(code)): \(message)"
        case .journalUnavailable(let reason): "the purchase journal is unavailable: \(reason)"
        }
    }
}
