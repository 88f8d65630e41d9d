import Foundation
import LedgerTestSupport
import Testing

/// The chaos suite, sized for CI (`ORDERSAFE_CHAOS_PURCHASES` makes it larger, `ORDERSAFE_CHAOS_SEED` replays a run,
/// `ORDERSAFE_CHAOS_ENGINES=postgres` runs one engine only).
@Suite("Chaos: nothing paid is lost, credited twice, or credited to the wrong user", .serialized)
struct ChaosTests {
    static let purchases = ProcessInfo.processInfo.environment["ORDERSAFE_CHAOS_PURCHASES"].flatMap(Int.init) ?? 2000
    static let seed =
        ProcessInfo.processInfo.environment["ORDERSAFE_CHAOS_SEED"].flatMap(UInt64.init)
        ?? UInt64.random(in: 1...UInt64.max / 2)

    static let engines = TestEngine.available.filter { engine in
        ProcessInfo.processInfo.environment["ORDERSAFE_CHAOS_ENGINES"].map {
            $0.split(separator: ",").contains(Substring(engine.rawValue))
        } ?? true
    }

    @Test(
        "a population buys through all three channels under faults; the ledger matches the providers",
        arguments: ChaosTests.engines)
    func chaos(engine: TestEngine) async throws {
        let replicas = engine == .postgres ? 2 : 1
        let start = ContinuousClock.now
        let counts = try await ChaosRun(engine: engine, purchases: Self.purchases, replicas: replicas, seed: Self.seed)
            .run()
        print("chaos[\(engine.rawValue), seed \(Self.seed)]: \(counts) in \(ContinuousClock.now - start)")
        #expect(counts.purchases.values.reduce(0, +) == Self.purchases)
        #expect(Double(counts.faulted) >= 0.2 * Double(counts.steps), "at least 20% of steps must be faulted")
    }
}
