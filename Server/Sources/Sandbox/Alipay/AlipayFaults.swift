/// A fault the sandbox Alipay applies to the next notification it sends.
public enum AlipayNotificationFault: Sendable, Hashable {
    /// Never sent at all (Alipay gave up, or the network ate it).
    case drop
    /// Sent twice.
    case duplicate
    /// Sent after an extra delay (in compressed sandbox time).
    case delay(Duration)
    /// Held back and sent after the notification that follows it.
    case reorder
    /// Sent with `total_amount` altered after signing, so its signature no longer verifies.
    case tamper
}

/// A fault the sandbox Alipay applies to the next gateway calls.
public enum AlipayGatewayFault: Sendable, Hashable {
    /// Answers HTTP 502.
    case serverError
    /// Answers only after the delay (longer than the client's timeout).
    case timeout(Duration)
    /// Answers code 20000 `isp.unknow-error` (a system error the client retries).
    case systemError
    /// Answers a correct body with a signature made over different content.
    case badSignature
    /// The next refund goes through one fen short of what was asked, and the answer says so in `refund_fee`.
    case shortRefund
}
