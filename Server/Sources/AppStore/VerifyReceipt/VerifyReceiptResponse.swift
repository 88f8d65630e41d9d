import Foundation

/// A `verifyReceipt` answer, read tolerantly: Apple sends numbers as strings in some places and numbers in
/// others, and iOS 6-style answers hold `latest_receipt_info` as an object rather than an array.
public struct VerifyReceiptResponse: @unchecked Sendable {
    public var status: Int
    public var environment: String?
    public var isRetryable: Bool
    /// `receipt` as Apple sent it.
    public var receipt: [String: Any]?
    /// `receipt.in_app`, or, for an iOS 6 receipt, the receipt's own transaction.
    public var inApp: [Purchase]
    public var latestReceiptInfo: [Purchase]
    public var pendingRenewalInfo: [[String: Any]]

    /// One purchase, the fields OrderSafe acts on typed; the rest stay in `fields`.
    public struct Purchase: @unchecked Sendable {
        public var productID: String?
        public var transactionID: String?
        public var originalTransactionID: String?
        public var quantity: Int64?
        public var purchaseDateMS: Int64?
        public var originalPurchaseDateMS: Int64?
        public var expiresDateMS: Int64?
        public var cancellationDateMS: Int64?
        public var webOrderLineItemID: String?
        public var isTrialPeriod: Bool?
        public var fields: [String: Any]

        init(_ fields: [String: Any]) {
            self.fields = fields
            productID = Tolerant.string(fields["product_id"])
            transactionID = Tolerant.string(fields["transaction_id"])
            originalTransactionID = Tolerant.string(fields["original_transaction_id"])
            quantity = Tolerant.int(fields["quantity"])
            purchaseDateMS = Tolerant.int(fields["purchase_date_ms"])
            originalPurchaseDateMS = Tolerant.int(fields["original_purchase_date_ms"])
            // iOS 6 answers give milliseconds in `expires_date` itself.
            expiresDateMS = Tolerant.int(fields["expires_date_ms"]) ?? Tolerant.int(fields["expires_date"])
            cancellationDateMS = Tolerant.int(fields["cancellation_date_ms"])
            webOrderLineItemID = Tolerant.string(fields["web_order_line_item_id"])
            isTrialPeriod = Tolerant.bool(fields["is_trial_period"])
        }
    }

    init(json: [String: Any]) throws(VerifyReceiptError) {
        guard let status = Tolerant.int(json["status"]) else { throw .malformedResponse("no status") }
        self.status = Int(status)
        environment = Tolerant.string(json["environment"])
        isRetryable = Tolerant.bool(json["is-retryable"]) ?? false
        receipt = json["receipt"] as? [String: Any]
        // iOS 6 receipts are themselves the one transaction.
        if let list = receipt?["in_app"] as? [[String: Any]] {
            inApp = list.map(Purchase.init)
        } else if let receipt, receipt["transaction_id"] != nil {
            inApp = [Purchase(receipt)]
        } else {
            inApp = []
        }
        switch json["latest_receipt_info"] {
        case let list as [[String: Any]]: latestReceiptInfo = list.map(Purchase.init)
        case let single as [String: Any]: latestReceiptInfo = [Purchase(single)]
        default: latestReceiptInfo = []
        }
        pendingRenewalInfo = json["pending_renewal_info"] as? [[String: Any]] ?? []
    }

    public init(body: [UInt8]) throws(VerifyReceiptError) {
        guard body.count <= 8 << 20, let json = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        else {
            throw .malformedResponse("not a JSON object")
        }
        try self.init(json: json)
    }
}

/// Values Apple sends as numbers or as strings.
enum Tolerant {
    static func int(_ value: Any?) -> Int64? {
        switch value {
        case let number as NSNumber: number.int64Value
        case let text as String: Int64(text.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }

    static func string(_ value: Any?) -> String? {
        switch value {
        case let text as String: text
        case let number as NSNumber: number.stringValue
        default: nil
        }
    }

    static func bool(_ value: Any?) -> Bool? {
        switch value {
        case let flag as Bool: flag
        case let text as String:
            ["true", "1"].contains(text.lowercased()) ? true : ["false", "0"].contains(text.lowercased()) ? false : nil
        case let number as NSNumber: number.intValue != 0
        default: nil
        }
    }
}
