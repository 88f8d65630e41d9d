import Foundation
import NIOCore

/// How many PostgreSQL test databases may be open at once, so that the suite's connections stay under the cluster's
/// `max_connections` (scripts/lib/postgres.sh) whatever the order Swift Testing runs tests in.
///
/// Each database's pools open up to 4 connections per event loop (one per core) and keep them until they shut down.
/// Unbounded, the whole suite at once held 273 of 300 at its peak on 2 cores (polled every 0.2 s); a CI run failed 20
/// tests at once, and the same suite on a cluster of 200 fails them with "sorry, too many clients already" (53300).
/// The budget gives each open database two pools of its own (the replica tests) and one admin connection: 11
/// databases on 2 cores. Set `ORDERSAFE_TEST_POSTGRES_DATABASES` to choose another number.
public actor PostgresDatabaseGate {
    /// The suite's gate (``TestEngine``).
    static let shared = PostgresDatabaseGate(
        limit: ProcessInfo.processInfo.environment["ORDERSAFE_TEST_POSTGRES_DATABASES"].flatMap { Int($0) }
            ?? max(2, connectionBudget / (2 * 4 * System.coreCount + 1)))

    /// The connections the suite's databases may hold: `max_connections` less room for the admin statements of
    /// databases being created and dropped.
    static let connectionBudget = 200

    /// The gates the current task holds a place in, so that a second database it opens (nested) does not wait for
    /// itself.
    @TaskLocal private static var holding: Set<ObjectIdentifier> = []

    private var available: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// A gate that lets `limit` (at least one) in at once.
    public init(limit: Int) { available = max(1, limit) }

    /// Runs `body` once this gate has a place for it, and gives the place to the next when `body` ends, however it
    /// ends. A task already inside runs `body` at once.
    public nonisolated func admitting<R>(_ body: () async throws -> R) async throws -> R {
        let gate = ObjectIdentifier(self)
        if Self.holding.contains(gate) { return try await body() }
        await acquire()
        do {
            let result = try await Self.$holding.withValue(Self.holding.union([gate])) { try await body() }
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }

    private func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            available += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
