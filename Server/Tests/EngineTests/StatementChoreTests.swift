import Foundation
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

@testable import Engine

/// A provider whose statement never comes (its download hangs until cancelled) or whose file is refused.
private struct StuckStatement: StatementSource {
    let hangs: Bool

    var utcOffset: Int { 8 * 3600 }

    func statement(of day: StatementDay) async throws -> StatementAvailability {
        if hangs {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            throw CancellationError()
        }
        throw StatementError.unreadable(.alipay, day: day.description, "a zip of blank lines")
    }

    func recoverPayment(_ entry: StatementEntry, evidence: String) async throws -> PaymentRecovery { .noOrder("") }
    func paymentDay(of payment: RecordedPayment) async throws -> ProviderPayment { .notPaid }
    func refundDay(of payment: RecordedPayment) async throws -> ProviderRefund { .notRefunded }
    func recoverRefund(_ entry: StatementEntry, of payment: RecordedPayment, evidence: String) async throws -> Bool {
        false
    }
}

@Suite("Statement chore: a day's run is time-boxed, and a failed day backs off")
struct StatementChoreTests {
    static func chore(hangs: Bool, ledger: any OrderBook & StatementBook) -> StatementChore {
        StatementChore(
            reconciler: StatementReconciler(
                ledger: ledger, sources: [.alipay: StuckStatement(hangs: hangs)],
                clock: ManualClock(EngineFixtures.now),
                logger: TestLog.logger),
            channel: .alipay, utcOffset: 8 * 3600, hour: 10, timeBox: .milliseconds(200))
    }

    @Test("a day that runs past its time box is stopped and tried again in half an hour, keeping what was done")
    func timeBox() async throws {
        try await TestEngine.sqlite.withLedger { _, ledger in
            let now = EngineFixtures.now.addingTimeInterval(86400)
            do {
                _ = try await Self.chore(hangs: true, ledger: ledger).run(payload: "", now: now)
                Issue.record("a hung day returned")
            } catch let retry as ChoreRetry {
                #expect(retry.next == now.addingTimeInterval(1800))
                #expect(retry.payload.hasSuffix(";failures=1"))
                guard case StatementError.timedOut(.alipay, _, _) = retry.reason else {
                    Issue.record("not a time-out: \(retry.reason)")
                    return
                }
            }
        }
    }

    @Test("each failure in a row waits twice as long, up to six hours; a day that then succeeds starts over")
    func backoff() async throws {
        try await TestEngine.sqlite.withLedger { _, ledger in
            let now = EngineFixtures.now.addingTimeInterval(86400)
            let chore = Self.chore(hangs: false, ledger: ledger)
            var payload = "2026-11-01"
            var waits: [TimeInterval] = []
            for _ in 0..<7 {
                do {
                    _ = try await chore.run(payload: payload, now: now)
                } catch let retry as ChoreRetry {
                    waits.append(retry.next.timeIntervalSince(now))
                    payload = retry.payload
                }
            }
            #expect(waits == [1800, 3600, 7200, 14400, 21600, 21600, 21600])
            #expect(StatementChore.Progress(payload) == .init(done: "2026-11-01", failures: 7))
            #expect(StatementChore.Progress("2026-11-01").failures == 0)
            #expect(StatementChore.Progress("2026-11-01;failures=x").failures == 0)
        }
    }
}
