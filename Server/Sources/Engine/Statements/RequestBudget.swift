import Foundation

/// How hard a provider's API may be asked while a statement day is listed: at most `concurrency` calls at once and
/// `perSecond` started a second, so a day of many customers neither waits on one call at a time nor meets the
/// provider's rate limit first (a 429 that comes anyway is waited out by the client, after its `Retry-After`).
public struct RequestBudget: Sendable, Hashable {
    public var concurrency: Int
    public var perSecond: Int

    public init(concurrency: Int, perSecond: Int) {
        self.concurrency = max(1, concurrency)
        self.perSecond = max(1, perSecond)
    }

    /// `body` of each item within the budget, the results in the items' order; the first error thrown stops the
    /// calls not started yet and is thrown once the calls on their way have ended (each ends as it would: what was
    /// answered is not thrown away, so a caller that keeps each answer can resume where it stopped).
    func map<Item: Sendable, Result: Sendable>(
        _ items: [Item], _ body: @escaping @Sendable (Item) async throws -> Result
    ) async throws -> [Result] {
        let clock = ContinuousClock()
        let interval = Duration.seconds(1) / perSecond
        return try await withThrowingTaskGroup(of: (Int, Result).self) { group in
            var results: [Int: Result] = [:]
            var running = 0
            var nextStart = clock.now
            do {
                for (index, item) in items.enumerated() {
                    if running == concurrency, let (done, result) = try await group.next() {
                        results[done] = result
                        running -= 1
                    }
                    if nextStart > clock.now { try await clock.sleep(until: nextStart) }
                    nextStart = max(nextStart, clock.now) + interval
                    group.addTask { (index, try await body(item)) }
                    running += 1
                }
                for try await (done, result) in group { results[done] = result }
            } catch {
                while !group.isEmpty { _ = try? await group.next() }
                throw error
            }
            return items.indices.compactMap { results[$0] }
        }
    }
}
