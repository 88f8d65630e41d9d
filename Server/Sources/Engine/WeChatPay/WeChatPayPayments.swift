import Foundation
import Ledger
import Metrics
import OrderSafeModel
import WeChatPay

/// The WeChat Pay channel of the order engine: prepays new orders and signs the app's invoke parameters, and
/// turns v3 notifications into ledger changes — stored first, then verified on the raw bytes, decrypted, matched
/// to the order, and fulfilled exactly once.
public struct WeChatPayPayments: Sendable {
    let client: WeChatPayClient
    let notifications: WeChatPayNotificationParser
    let notifyURL: String
    let context: EngineContext<any WeChatPayLedger>
    /// The account takes test money (the built-in simulator): its payments mark their orders `sandbox`, fulfilled
    /// but never revenue.
    let sandbox: Bool
    /// How long an unpaid order stays payable at WeChat Pay (`time_expire`).
    public let paymentWindow: TimeInterval

    public init(
        client: WeChatPayClient, notifications: WeChatPayNotificationParser, notifyURL: String,
        context: EngineContext<any WeChatPayLedger>, sandbox: Bool, paymentWindow: TimeInterval = 30 * 60
    ) {
        self.client = client
        self.sandbox = sandbox
        self.notifications = notifications
        self.notifyURL = notifyURL
        self.context = context
        self.paymentWindow = paymentWindow
    }

    /// Prepays the order (idempotent at WeChat Pay for the same `out_trade_no` and amount) and signs the
    /// parameters the app hands to the WeChat SDK.
    public func invocation(for order: Order) async throws -> WeChatPayInvocation {
        let description = context.catalog.catalog.product(id: order.productID)?.title ?? order.productID
        let prepayID = try await client.prepayApp(
            WeChatPayAppOrder(
                outTradeNo: order.orderNo, description: String(description.prefix(127)), amount: order.amount,
                notifyURL: notifyURL, expiresAt: order.createdAt.addingTimeInterval(paymentWindow),
                attach: OrderProvenance(productID: order.productID, userID: order.userID).text))
        return try client.appInvocation(prepayID: prepayID)
    }

    /// What to answer WeChat Pay: 204 stops its retries; anything else makes it try again on its schedule.
    public enum Reply: Sendable, Equatable {
        case accepted
        case refused(status: Int, message: String)
    }

    /// The headers a notification is verified with, kept in the inbox beside its body.
    public static let signatureHeaders = [
        "Wechatpay-Timestamp", "Wechatpay-Nonce", "Wechatpay-Signature", "Wechatpay-Serial", "Wechatpay-Signature-Type",
    ]

    /// Handles one notification exactly as received: verified, then stored with what it records in one write
    /// (``Inbox``). Nothing is acknowledged before it is stored.
    public func handleNotification(headers: [String: String], body: [UInt8]) async throws -> Reply {
        let inbox = Inbox(context: context.narrowed { $0 })
        let refusal = try await inbox.notification(
            .wechatPay, headers: headers, body: body,
            verify: { try await verified(headers: headers, body: body) },
            apply: { notification, id, write in
                try await apply(notification, inboxID: id, in: write)
                return nil
            })
        return refusal.map { .refused(status: $0.status, message: $0.message) } ?? .accepted
    }

    /// The notification, its signature checked (the platform's key fetched when it is new) and its resource decrypted.
    private func verified(headers: [String: String], body: [UInt8]) async throws -> WeChatPayNotification {
        do {
            return try await notifications.parse(headers: headers, body: body)
        } catch {
            // WeChat Pay probes the endpoint with signatures it marks (`WECHATPAY/SIGNTEST/…`, its API v3 签名验证 page,
            // on 签名探测流量) and expects them to fail: refused like any bad signature (the entry, cut to its first
            // bytes, gives way to the genuine notification with the same body), and counted.
            if headers.first(where: { $0.key.lowercased() == "wechatpay-signature" })?.value
                .hasPrefix("WECHATPAY/SIGNTEST/") == true
            {
                Counter(label: "ordersafe_wechatpay_signature_probes_total").increment()
            }
            throw Refusal(status: 401, message: error.description, unauthenticated: true)
        }
    }

    private func apply(_ notification: WeChatPayNotification, inboxID: Int64, in write: any LedgerWrite) async throws {
        switch notification.eventType ?? "" {
        case "TRANSACTION.SUCCESS":
            try await applyTransaction(notification.plaintext, inboxID: inboxID, in: write)
        case "REFUND.SUCCESS":
            try await applyRefund(notification.plaintext, inboxID: inboxID, in: write)
        case let type where type.hasPrefix("REFUND."):
            context.logger.notice(
                "wechatpay refund notification stored", metadata: ["inbox_id": "\(inboxID)", "event_type": "\(type)"])
        default:
            context.logger.info(
                "wechatpay notification stored",
                metadata: ["inbox_id": "\(inboxID)", "event_type": "\(notification.eventType ?? "-")"])
        }
    }

    private func applyTransaction(_ resource: [UInt8], inboxID: Int64, in write: any LedgerWrite) async throws {
        let transaction: WeChatPayTransaction
        do {
            transaction = try WeChatPayTransaction(resource: resource)
        } catch {
            throw Refusal(status: 400, message: error.description)
        }
        // App and merchant must be ours; an amount that differs is recorded and flagged by the ledger, never credited.
        do {
            try transaction.check(
                appID: client.appID, merchantID: client.merchantID, outTradeNo: transaction.outTradeNo,
                amount: transaction.amount)
        } catch {
            throw Refusal(status: 400, message: error.description)
        }
        guard let order = try await order(paidBy: transaction, in: write) else {
            throw Refusal(status: 404, message: "unknown order \(transaction.outTradeNo)")
        }
        guard transaction.tradeState.isPaid, let transactionID = transaction.transactionID else { return }
        let outcome = try await write.fulfil(
            VerifiedPayment(
                channel: .wechatPay, providerTransactionID: transactionID, orderNo: order.orderNo,
                amount: transaction.amount,
                cause: .notification, evidence: "inbox:\(inboxID)", sandbox: sandbox),
            at: context.clock.now())
        context.log(outcome, "wechatpay notification applied", ["order_no": "\(order.orderNo)"])
    }
}
