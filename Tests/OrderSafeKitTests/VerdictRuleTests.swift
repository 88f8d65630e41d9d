import Foundation
import OrderSafeModel
import Synchronization
import Testing

@testable import OrderSafeKit

/// The one rule that keeps a charge from being consumed unrecorded: a StoreKit transaction is finished only when the
/// server answered `recorded` for that very transaction id.
@Suite("The verdict rule: only `recorded` for the exact transaction finishes it")
struct VerdictRuleTests {
    /// A clock the test moves.
    final class Clock: Sendable {
        private let date = Mutex(Date(timeIntervalSince1970: 1_795_000_000))
        func now() -> Date { date.withLock { $0 } }
        func advance(by seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    static let answers: [(name: String, answer: @Sendable (String) -> (Int, String))] = [
        (
            "recorded, for another transaction",
            { _ in (200, #"{"verdict":"recorded","transactions":[{"transaction_id":"1","verdict":"recorded"}]}"#) }
        ),
        (
            "rejected",
            { id in
                (
                    200,
                    #"{"verdict":"rejected","transactions":[{"transaction_id":"\#(id)","verdict":"rejected","error":{"code":"invalid_transaction","message":"x"}}]}"#
                )
            }
        ),
        (
            "rejected, with an empty transaction id",
            { _ in
                (
                    200,
                    #"{"verdict":"rejected","transactions":[{"transaction_id":"","verdict":"rejected","error":{"code":"invalid_transaction","message":"x"}}]}"#
                )
            }
        ),
        ("no verdicts", { _ in (200, #"{"verdict":"recorded","transactions":[]}"#) }),
        ("not JSON", { _ in (200, "<html>gateway</html>") }),
        (
            "held by the server's settings",
            { _ in (503, #"{"error":{"code":"transaction_held","message":"check appstore.bundle_id"}}"#) }
        ),
        (
            "a verdict nobody knows",
            { id in (200, #"{"verdict":"maybe","transactions":[{"transaction_id":"\#(id)","verdict":"maybe"}]}"#) }
        ),
    ]

    @Test(
        "an answer that is not `recorded` for the transaction's own id leaves it unfinished; fixed, it is recorded and finished once",
        arguments: 0..<answers.count)
    func notRecordedStaysUnfinished(index: Int) async throws {
        let (name, answer) = Self.answers[index]
        let h = Harness()
        defer { h.cleanUp() }
        let clock = Clock()
        let app = h.app(now: { clock.now() })
        _ = try await app.products()
        await h.server.set(submissionAnswer: answer)
        let outcome = await app.purchase("coins", through: .appStore)
        #expect(outcome.state != .fulfilled, "\(name): \(outcome.name)")
        let charged = try #require(await h.store.charged.first)
        #expect(await h.store.finishCount[charged.id] == nil, "\(name): finished on an answer that did not record it")
        #expect(await h.store.unfinishedIDs == [charged.id])
        #expect(!h.journalFiles.isEmpty, "\(name): the purchase is still kept")

        // The answer is right again; a relaunch a while later records it and finishes it, once.
        await h.server.set(submissionAnswer: nil)
        clock.advance(by: 31)
        let relaunched = h.app(now: { clock.now() })
        let outcomes = await relaunched.resume()
        #expect(outcomes.contains { $0.state == .fulfilled }, "\(name): \(outcomes.map(\.name))")
        #expect(await h.store.finishCount[charged.id] == 1)
        #expect(await h.server.balances["user-1"] == 60 && h.journalFiles.isEmpty)
    }

    @Test("a transaction the server did not record waits longer after each answer before it is submitted again")
    func backoff() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let clock = Clock()
        let app = h.app(now: { clock.now() })
        _ = try await app.products()
        await h.server.set(submissionAnswer: Self.answers[1].answer)
        #expect(await app.purchase("coins", through: .appStore).state == .underReview)
        func submissions() async -> Int {
            await h.server.requests.filter { $0.hasSuffix("/appstore/transactions") }.count
        }
        #expect(await submissions() == 1)
        _ = await app.resume()
        #expect(await submissions() == 1, "asked again at once")
        for (wait, total) in [(31.0, 2), (31, 2), (31, 3), (121, 4)] {
            clock.advance(by: wait)
            _ = await app.resume()
            #expect(await submissions() == total, "after \(wait) s more")
        }
        #expect(JournalEntry.retryDelay(attempts: 1) == 30 && JournalEntry.retryDelay(attempts: 3) == 120)
        #expect(JournalEntry.retryDelay(attempts: 100) == 6 * 3600)
        #expect(JournalEntry.retryDelay(attempts: 100, cap: 2) == 2, "ConfirmationPolicy.notRecordedRetryCap")
    }
}
