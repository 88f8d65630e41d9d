/// A fault the sandbox WeChat Pay applies to the next notification it sends.
public enum WeChatPayNotificationFault: Sendable, Hashable {
    /// Never sent.
    case drop
    /// Sent twice.
    case duplicate
    /// Sent after an extra delay.
    case delay(Duration)
    /// Held back and sent after the notification that follows it.
    case reorder
    /// Signed with a `Wechatpay-Timestamp` ten minutes in the past (a replay, as the merchant must see it).
    case staleTimestamp
}

/// A fault the sandbox WeChat Pay applies to the next API calls.
public enum WeChatPayAPIFault: Sendable, Hashable {
    /// Answers HTTP 500 `SYSTEM_ERROR`.
    case serverError
    /// Answers HTTP 429 `FREQUENCY_LIMITED`.
    case frequencyLimited
    /// Answers only after the delay, with 504.
    case timeout(Duration)
    /// Answers correctly but with a signature over other bytes.
    case badSignature
}
