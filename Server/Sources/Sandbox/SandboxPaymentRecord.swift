import OrderSafeModel

/// What a simulator itself knows was paid: the ground truth a chaos run checks the ledger against.
public struct SandboxPaymentRecord: Sendable, Hashable {
    /// Alipay `trade_no`, WeChat Pay `transaction_id`, App Store `transactionId`.
    public var providerTransactionID: String
    /// The merchant's order number (`out_trade_no`), or for the App Store the `appAccountToken` given, if any.
    public var orderReference: String?
    /// What the buyer paid (nil for the App Store, whose price depends on the storefront).
    public var amount: Money?
}
