import Ledger

extension AlipayPayments: NotificationReplayer {
    public func replay(_ signal: PendingSignal) async throws {
        _ = try await handleNotification(body: signal.body, headers: signal.headers)
    }
}
