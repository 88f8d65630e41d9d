import Foundation
import OrderSafeModel

/// `trade_state` of a v3 transaction.
public enum WeChatPayTradeState: String, Sendable, Hashable, Codable, CaseIterable {
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
public struct WeChatPayTransaction: Sendable, Hashable, Decodable {
    public var appID: String
    public var merchantID: String
    public var outTradeNo: String
    /// WeChat Pay's transaction id: the provider transaction id.
    public var transactionID: String?
    public var tradeState: WeChatPayTradeState
    public var tradeStateDescription: String?
    public var successTime: String?
    public var attach: String?
    /// `amount.total` in fen with `amount.currency`.
    public var amount: Money

    enum CodingKeys: String, CodingKey {
        case appID = "appid", merchantID = "mchid", outTradeNo = "out_trade_no", transactionID = "transaction_id"
        case tradeState = "trade_state", tradeStateDescription = "trade_state_desc", successTime = "success_time"
        case attach, amount
    }

    struct Amount: Decodable {
        var total: Int64
        var currency: CurrencyCode?
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        appID = try container.decode(String.self, forKey: .appID)
        merchantID = try container.decode(String.self, forKey: .merchantID)
        outTradeNo = try container.decode(String.self, forKey: .outTradeNo)
        transactionID = try container.decodeIfPresent(String.self, forKey: .transactionID)
        tradeState = try container.decode(WeChatPayTradeState.self, forKey: .tradeState)
        tradeStateDescription = try container.decodeIfPresent(String.self, forKey: .tradeStateDescription)
        successTime = try container.decodeIfPresent(String.self, forKey: .successTime)
        attach = try container.decodeIfPresent(String.self, forKey: .attach)
        let amount = try container.decode(Amount.self, forKey: .amount)
        guard amount.total > 0 else {
            throw DecodingError.dataCorruptedError(forKey: .amount, in: container, debugDescription: "amount.total must be positive")
        }
        self.amount = Money(amountMinor: amount.total, currency: amount.currency ?? .cny)
    }

    /// Decodes a decrypted resource.
    public init(resource: [UInt8]) throws(WeChatPayError) {
        do {
            self = try JSONDecoder().decode(Self.self, from: Data(resource))
        } catch let error as DecodingError {
            throw .malformedNotification("transaction: \(error.readableDescription)")
        } catch {
            throw .malformedNotification("transaction: \(error)")
        }
    }

    /// The business checks against our order: app and merchant ours, order number and amount equal.
    public func check(appID: String, merchantID: String, outTradeNo: String, amount: Money) throws(WeChatPayMismatch) {
        guard self.appID == appID else { throw .wrongAppID(self.appID) }
        guard self.merchantID == merchantID else { throw .wrongMerchant(self.merchantID) }
        guard self.outTradeNo == outTradeNo else { throw .wrongOrder(self.outTradeNo) }
        guard self.amount == amount else { throw .amountMismatch(expected: amount, got: self.amount) }
    }
}

/// A refund resource (`REFUND.SUCCESS`, `REFUND.ABNORMAL`, `REFUND.CLOSED`).
public struct WeChatPayRefund: Sendable, Hashable, Decodable {
    public enum Status: String, Sendable, Hashable, Decodable {
        case success = "SUCCESS", closed = "CLOSED", processing = "PROCESSING", abnormal = "ABNORMAL"
    }

    public var merchantID: String
    public var outTradeNo: String
    public var transactionID: String
    public var outRefundNo: String
    public var refundID: String
    public var status: Status
    /// `amount.refund`, in fen.
    public var refundFen: Int64
    /// `amount.total` of the original transaction, in fen.
    public var totalFen: Int64

    enum CodingKeys: String, CodingKey {
        case merchantID = "mchid", outTradeNo = "out_trade_no", transactionID = "transaction_id"
        case outRefundNo = "out_refund_no", refundID = "refund_id", status = "refund_status", amount
    }

    struct Amount: Decodable {
        var total: Int64
        var refund: Int64
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        merchantID = try container.decode(String.self, forKey: .merchantID)
        outTradeNo = try container.decode(String.self, forKey: .outTradeNo)
        transactionID = try container.decode(String.self, forKey: .transactionID)
        outRefundNo = try container.decode(String.self, forKey: .outRefundNo)
        refundID = try container.decode(String.self, forKey: .refundID)
        status = try container.decode(Status.self, forKey: .status)
        let amount = try container.decode(Amount.self, forKey: .amount)
        refundFen = amount.refund
        totalFen = amount.total
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
