import Alipay
import Foundation
import Ledger
import OrderSafeModel

/// The Alipay channel of the order engine: signs order strings for new orders, and turns notifications into
/// ledger changes — stored first, then verified, matched to the order, and fulfilled exactly once.
public struct AlipayPayments: Sendable {
    let credentials: AlipayCredentials
    /// Queries and closes trades (reconciliation); nil: orders are settled by notifications only.
    let gateway: AlipayGatewayClient?
    let sellerID: String?
    let notifyURL: String
    let context: EngineContext<any AlipayLedger>
    /// The account takes test money (the built-in simulator, or Alipay's sandbox): its payments mark their orders
    /// `sandbox`, fulfilled but never revenue.
    let sandbox: Bool
    /// How long an unpaid order stays payable at Alipay (`time_expire`).
    public let paymentWindow: TimeInterval

    public init(
        credentials: AlipayCredentials, gateway: AlipayGatewayClient?, sellerID: String?, notifyURL: String,
        context: EngineContext<any AlipayLedger>,
        sandbox: Bool, paymentWindow: TimeInterval = 30 * 60
    ) {
        self.credentials = credentials
        self.sandbox = sandbox
        self.gateway = gateway
        self.sellerID = sellerID
        self.notifyURL = notifyURL
        self.context = context
        self.paymentWindow = paymentWindow
    }

    /// The signed order string the app passes to the Alipay SDK.
    public func invocation(for order: Order) throws -> AlipayInvocation {
        let subject = context.catalog.catalog.product(id: order.productID)?.title ?? order.productID
        let request = AlipayAppPayOrder(
            outTradeNo: order.orderNo, amount: order.amount, subject: subject, notifyURL: notifyURL,
            expiresAt: order.createdAt.addingTimeInterval(paymentWindow),
            passbackParams: OrderProvenance(productID: order.productID, userID: order.userID).text)
        return AlipayInvocation(
            orderString: try AlipayRequestSigner(credentials: credentials).orderString(
                for: request, at: context.clock.now()))
    }

    /// What to answer Alipay: the 7 bytes `success` stop its retries; anything else makes it try again later.
    public enum Reply: String, Sendable {
        case success, failure
    }

    /// Handles one notification body exactly as received: verified, then stored with what it records in one write
    /// (``Inbox``). Nothing is acknowledged before it is stored.
    public func handleNotification(body: [UInt8], headers: [String: String]) async throws -> Reply {
        let refusal = try await Inbox(context: context.narrowed { $0 }).notification(
            .alipay, headers: headers, body: body,
            verify: {
                do {
                    let notification = try AlipayNotificationVerifier(credentials: credentials).verify(body: body)
                    // App and seller must be ours; an amount that differs is recorded and flagged by the ledger,
                    // never credited.
                    try notification.check(
                        against: .init(
                            appID: credentials.appID, sellerID: sellerID, outTradeNo: notification.outTradeNo,
                            amount: notification.totalAmount))
                    return notification
                } catch let error as AlipayNotificationError {
                    // Alipay reads the body, not the status.
                    throw Refusal(status: 200, message: error.description, unauthenticated: error.isUnauthenticated)
                }
            },
            apply: { notification, id, write in
                do {
                    try await apply(notification, inboxID: id, in: write)
                } catch let error as AlipayNotificationError {
                    throw Refusal(status: 200, message: error.description, unauthenticated: error.isUnauthenticated)
                }
                return nil
            })
        return refusal == nil ? .success : .failure
    }

    private func apply(_ notification: AlipayNotification, inboxID: Int64, in write: any LedgerWrite) async throws {
        guard let order = try await order(paidBy: notification, in: write) else {
            throw AlipayNotificationError.unknownOrder(notification.outTradeNo)
        }
        if notification.refund != nil {
            try await applyRefund(notification, order: order, inboxID: inboxID, in: write)
            return
        }
        guard notification.tradeStatus.isPaid else { return }
        let outcome = try await write.fulfil(
            VerifiedPayment(
                channel: .alipay, providerTransactionID: notification.tradeNo, orderNo: order.orderNo,
                amount: notification.totalAmount, cause: .notification, evidence: "inbox:\(inboxID)", sandbox: sandbox),
            at: context.clock.now())
        context.log(outcome, "alipay notification applied", ["order_no": "\(order.orderNo)"])
    }

    /// The order `notification` is about: the ledger's, or — lost with a restored database — rebuilt from its
    /// `passback_params` when it says the trade was paid (a refund's notification never rebuilds). Nil when neither.
    private func order(paidBy notification: AlipayNotification, in write: any LedgerWrite) async throws -> Order? {
        if let order = try await write.order(number: notification.outTradeNo) {
            return order.channel == .alipay ? order : nil
        }
        guard notification.refund == nil, notification.tradeStatus.isPaid else { return nil }
        let outcome = try await OrderRebuilder(context: context.with(ledger: write)).order(
            notification.outTradeNo, channel: .alipay, provenance: notification.passbackParams,
            amount: notification.totalAmount, createdAt: context.clock.now())
        if case .rebuilt(let order) = outcome { return order }
        return nil
    }
}
