import ChannelSupport
import Foundation
import OrderSafeModel

/// `trade_state` of a v3 transaction.
public enum WeChatPayTradeState: String, Sendable, Hashable, CaseIterable, Codable {
    case success = "SUCCESS"
    case refund = "REFUND"
    case notPay = "NOTPAY"
    case closed = "CLOSED"
    case revoked = "REVOKED"
    case userPaying = "USERPAYING"
    case payError = "PAYERROR"
    case accept = "ACCEPT"

    /// The states in which the payer's money was taken.
    public var isPaid: Bool { self == .success || self == .refund }
}

/// A v3 transaction, as a `TRANSACTION.SUCCESS` notification's resource or a query answer carries it.
public struct WeChatPayTransaction: Sendable, Hashable {
    public var appID: String
    public var merchantID: String
    public var outTradeNo: String
    /// WeChat Pay's transaction id: the provider transaction id (absent until paid).
    public var transactionID: String?
    public var tradeState: WeChatPayTradeState
    public var tradeStateDescription: String?
    public var successTime: String?
    public var attach: String?
    /// `amount.total` in fen with `amount.currency`.
    public var amount: Money

    public init(
        appID: String, merchantID: String, outTradeNo: String, transactionID: String?, tradeState: WeChatPayTradeState,
        tradeStateDescription: String? = nil, successTime: String? = nil, attach: String? = nil, amount: Money
    ) {
        self.appID = appID
        self.merchantID = merchantID
        self.outTradeNo = outTradeNo
        self.transactionID = transactionID
        self.tradeState = tradeState
        self.tradeStateDescription = tradeStateDescription
        self.successTime = successTime
        self.attach = attach
        self.amount = amount
    }

    /// Decodes a decrypted resource or a query answer.
    public init(resource: [UInt8]) throws(WeChatPayError) {
        do {
            try self.init(JSONObject(resource))
        } catch let error as WeChatPayError {
            throw error
        } catch {
            throw .malformedNotification("transaction: \(error)")
        }
    }

    init(_ object: JSONObject) throws {
        let stateText = try object.string("trade_state")
        guard let state = WeChatPayTradeState(rawValue: stateText) else {
            throw WeChatPayError.malformedNotification("transaction: unknown trade_state '\(stateText)'")
        }
        let amount = try object.object("amount")
        let total = try amount.int("total")
        guard total > 0 else {
            throw WeChatPayError.malformedNotification("transaction: amount.total must be positive")
        }
        let currencyText = try amount.optionalString("currency") ?? "CNY"
        guard let currency = CurrencyCode(currencyText) else {
            throw WeChatPayError.malformedNotification("transaction: '\(currencyText)' is not a currency code")
        }
        self.init(
            appID: try object.string("appid"), merchantID: try object.string("mchid"),
            outTradeNo: try object.string("out_trade_no"),
            transactionID: try object.optionalString("transaction_id").flatMap { $0.isEmpty ? nil : $0 },
            tradeState: state,
            tradeStateDescription: try object.optionalString("trade_state_desc"),
            successTime: try object.optionalString("success_time"),
            attach: try object.optionalString("attach"), amount: Money(amountMinor: total, currency: currency))
    }

    /// The business checks against our order: app and merchant ours, order number and amount equal.
    public func check(appID: String, merchantID: String, outTradeNo: String, amount: Money) throws(WeChatPayMismatch) {
        guard self.appID == appID else { throw .wrongAppID(self.appID) }
        guard self.merchantID == merchantID else { throw .wrongMerchant(self.merchantID) }
        guard self.outTradeNo == outTradeNo else { throw .wrongOrder(self.outTradeNo) }
        guard self.amount == amount else { throw .amountMismatch(expected: amount, got: self.amount) }
    }
}

/// A refund, as a refund notification's resource (`REFUND.SUCCESS`, `REFUND.ABNORMAL`, `REFUND.CLOSED`) or the
/// refund API's answer carries it.
public struct WeChatPayRefund: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable {
        case success = "SUCCESS"
        case closed = "CLOSED"
        case processing = "PROCESSING"
        case abnormal = "ABNORMAL"
    }

    public var merchantID: String?
    public var outTradeNo: String
    public var transactionID: String
    public var outRefundNo: String
    public var refundID: String
    public var status: Status
    /// `amount.refund`, in fen.
    public var refundFen: Int64
    /// `amount.total` of the original transaction, in fen.
    public var totalFen: Int64

    public init(
        merchantID: String?, outTradeNo: String, transactionID: String, outRefundNo: String, refundID: String,
        status: Status,
        refundFen: Int64, totalFen: Int64
    ) {
        self.merchantID = merchantID
        self.outTradeNo = outTradeNo
        self.transactionID = transactionID
        self.outRefundNo = outRefundNo
        self.refundID = refundID
        self.status = status
        self.refundFen = refundFen
        self.totalFen = totalFen
    }

    /// Decodes a decrypted refund resource or a refund API answer (which names the status `status`).
    public init(resource: [UInt8]) throws(WeChatPayError) {
        do {
            let object = try JSONObject(resource)
            let statusText = try object.optionalString("refund_status") ?? object.string("status")
            guard let status = Status(rawValue: statusText) else {
                throw WeChatPayError.malformedNotification("refund: unknown status '\(statusText)'")
            }
            let amount = try object.object("amount")
            self.init(
                merchantID: try object.optionalString("mchid"), outTradeNo: try object.string("out_trade_no"),
                transactionID: try object.string("transaction_id"), outRefundNo: try object.string("out_refund_no"),
                refundID: try object.string("refund_id"), status: status, refundFen: try amount.int("refund"),
                totalFen: try amount.int("total"))
        } catch let error as WeChatPayError {
            throw error
        } catch {
            throw .malformedNotification("refund: \(error)")
        }
    }
}

/// A verified transaction that is not the order we expected.
public enum WeChatPayMismatch: Error, Equatable, CustomStringConvertible {
    case wrongAppID(String)
    case wrongMerchant(String)
    case wrongOrder(String)
    case amountMismatch(expected: Money, got: Money)

    public var description: String {
        switch self {
        case .wrongAppID(let appID): "the transaction is for app '\(appID)', not ours"
        case .wrongMerchant(let merchantID): "the transaction is for merchant '\(merchantID)', not ours"
        case .wrongOrder(let orderNo): "the transaction is for order '\(orderNo)'"
        case .amountMismatch(let expected, let got): "the transaction says \(got), the order is \(expected)"
        }
    }
}
