import Foundation

/// The app's token refresh (``OrderSafeConfiguration/refreshToken``), asked once per refused token however many calls
/// the server refused with it at the same time; the calls then go again with the fresh one.
actor TokenRefresh {
    private let refresh: @Sendable (String) async throws -> String
    private var latest: (refused: String, fresh: Task<String, any Error>)?

    init(_ refresh: @escaping @Sendable (String) async throws -> String) {
        self.refresh = refresh
    }

    /// A fresh token for one the server refused (401): the app's answer, shared with every call refused with the same
    /// token. A refresh that failed is not kept: the next refusal asks the app again.
    func fresh(after refused: String) async throws -> String {
        if let latest, latest.refused == refused { return try await latest.fresh.value }
        let task = Task { [refresh] in try await refresh(refused) }
        latest = (refused, task)
        do {
            return try await task.value
        } catch {
            if latest?.refused == refused { latest = nil }
            throw error
        }
    }
}
