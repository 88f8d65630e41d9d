import Ledger

extension AppStorePayments: NotificationReplayer {
    public func replay(_ signal: PendingSignal) async throws {
        _ = try await handleNotification(body: signal.body)
    }
}
