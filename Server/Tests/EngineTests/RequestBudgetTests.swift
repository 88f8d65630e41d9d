import Foundation
import Testing

@testable import Engine

/// A provider's API asked within a budget: never more calls at once than allowed, never faster than allowed, and the
/// answers in the order asked.
@Suite("Request budget")
struct RequestBudgetTests {
    actor Gauge {
        private(set) var running = 0
        private(set) var most = 0
        private(set) var starts: [ContinuousClock.Instant] = []

        func begin() {
            running += 1
            most = max(most, running)
            starts.append(ContinuousClock.now)
        }

        func end() { running -= 1 }
    }

    @Test("at most `concurrency` at once and `perSecond` started a second; results in the items' order")
    func withinBudget() async throws {
        let gauge = Gauge()
        let results = try await RequestBudget(concurrency: 3, perSecond: 50).map(Array(0..<12)) { item in
            await gauge.begin()
            try await Task.sleep(for: .milliseconds(30 - item))
            await gauge.end()
            return item * 10
        }
        #expect(results == (0..<12).map { $0 * 10 })
        #expect(await gauge.most <= 3)
        let starts = await gauge.starts
        #expect(starts.count == 12)
        // Twelve starts 20 ms apart at the least: the last is at least 220 ms after the first.
        #expect(starts.last! - starts.first! >= .milliseconds(215))
    }

    @Test("the first error stops what has not started and is thrown")
    func stopsOnError() async throws {
        struct Refused: Error {}
        let gauge = Gauge()
        await #expect(throws: Refused.self) {
            _ = try await RequestBudget(concurrency: 1, perSecond: 1000).map(Array(0..<10)) { item in
                await gauge.begin()
                if item == 2 { throw Refused() }
                return item
            }
        }
        #expect(await gauge.starts.count == 3)
    }
}
