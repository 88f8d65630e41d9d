/// Asks `condition` every `interval` until it holds or `limit` has passed; returns whether it held. A test waits here
/// for what happens on another task (a refund reaching a balance, an app settling, a server closing connections):
/// a fast machine returns at once, and the limit, like `.timeLimit(.hang)`, catches what never happens rather than
/// what is slow. Waits of 3 to 30 seconds were not enough when `swift test` ran every suite at once on two cores.
public func eventually(
    within limit: Duration = .seconds(300), every interval: Duration = .milliseconds(50),
    _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: interval)
    }
}
