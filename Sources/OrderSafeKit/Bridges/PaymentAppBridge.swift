/// What every bridge to a payment app (``AlipayBridge``, ``WeChatPayBridge``) is told besides its payments.
public protocol PaymentAppBridge: Sendable {
    /// The app is active again, seen by OrderSafe (``AppActivations``): end a wait for the payment app's answer that
    /// is not coming — forward to the bridge's ``PaymentResultRelay/appBecameActive(grace:)``. Does nothing unless
    /// written.
    func appBecameActive() async
}

extension PaymentAppBridge {
    public func appBecameActive() async {}
}
