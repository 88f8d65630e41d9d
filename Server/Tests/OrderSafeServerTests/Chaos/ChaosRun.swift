import Engine
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Sandbox
import Synchronization
import Testing

@testable import OrderSafeServer

/// A population of users buying through the three channels, across server replicas on one database, while faults
/// are injected at every step: the app crashes, requests never arrive or their answers are lost after the commit
/// (a restart, a database error), providers drop, duplicate, delay and reorder notifications and fail calls, one
/// receipt is submitted by two devices at once and by another user. Afterwards the ledger is checked against what
/// the sandboxes themselves know was paid.
struct ChaosRun {
    let engine: TestEngine
    let purchases: Int
    let replicas: Int
    let seed: UInt64
    let users = 97
    let concurrency = 8

    struct Expectations: Sendable {
        /// order number → user, for every order created.
        var orderOwners: [String: String] = [:]
        /// App Store transaction id → the user who bought it.
        var transactionOwners: [String: String] = [:]
        var abandonedOrders: [String] = []
        /// (user, signed transaction, transaction id) the app still has to finish at its next launch.
        var unfinished: [(String, String, String)] = []
        /// App Store transactions Apple refunded before the server heard of them: recorded, then reversed.
        var refundedTransactions: Set<String> = []
        /// App Store subscription transactions (they grant VIP time, not coins).
        var subscriptionTransactions: Set<String> = []
        /// Signed App Store notifications held back to arrive last.
        var heldNotifications: [String] = []
    }

    final class Shared: Sendable {
        let expectations = Mutex(Expectations())
        let tally = ChaosTally()
        let random: Mutex<SeededRandom>
        private let arrived = Mutex(Set<[UInt8]>())

        init(seed: UInt64) {
            random = Mutex(SeededRandom(state: seed ^ 0xC0FFEE))
        }

        func roll(_ percent: UInt64) -> Bool { random.withLock { $0.chance(percent) } }

        /// True the first time these exact notification bytes reach a server.
        func firstArrival(of body: [UInt8]) -> Bool { arrived.withLock { $0.insert(body).inserted } }
        func pick(_ count: Int) -> Int { random.withLock { Int($0.next() % UInt64(count)) } }
    }

    /// Runs the population and checks the ledger; returns the tallies.
    func run() async throws -> ChaosTally.Counts {
        try await engine.withDatabaseURL { url in
            let databaseText = TestServer.databaseSetting(url)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ordersafe-chaos-\(UUID().uuidString)"
            ).path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let settings = try await TestServer.settings(
                database: databaseText, extra: ["ORDERSAFE_SERVER_DATA_DIR": directory, "ORDERSAFE_SERVER_PORT": "9"])
            let clock = ManualClock(TestServer.now)
            let sandbox = try SandboxProviders(
                settings: settings.server, clock: clock, timeScale: 1e-5, logger: TestLog.logger)
            var built: [(Router<OrderSafeRequestContext>, LedgerDatabase, JobRunner, StatementReconciler)] = []
            for _ in 0..<replicas {
                let (router, components) = try await OrderSafeApplication.makeRouter(
                    settings: settings, clock: clock, random: { UInt64.random(in: .min ... .max) },
                    logger: TestLog.logger, sandbox: sandbox)
                built.append((router, components.database, components.runner, components.statements))
            }
            let verification = try LedgerDatabase(url: url, logger: TestLog.logger)
            let runners = built.map(\.2)
            do {
                let counts = try await Self.withClients(built.map(\.0)) { clients in
                    try await world(
                        clients: clients, runners: runners, sandbox: sandbox, clock: clock, database: verification)
                }
                try await Self.checkTheBooks(built[0].3, clock: clock, engine: engine, replicas: replicas)
                for (_, database, _, _) in built { try await database.shutdown() }
                try await verification.shutdown()
                return counts
            } catch {
                for (_, database, _, _) in built { try? await database.shutdown() }
                try? await verification.shutdown()
                throw error
            }
        }
    }

    /// The run ends with the books: each day it spanned, every provider's statement (as the sandboxes write them from
    /// what they charged and refunded: WeChat Pay's bill, Alipay's zip; the App Store's histories) is checked against
    /// the ledger at noon the next Beijing day, when all have published; nothing may be flagged.
    static func checkTheBooks(_ statements: StatementReconciler, clock: ManualClock, engine: TestEngine, replicas: Int)
        async throws
    {
        let ended = clock.now()
        StatementReconciliationTests.nextMorning(clock, hour: 12)
        var (matched, recovered, flagged) = (0, 0, 0)
        var lines: [String] = []
        for channel in statements.channels {
            let before = matched + recovered
            var day = try #require(statements.day(of: channel, containing: TestServer.now))
            let last = try #require(statements.day(of: channel, containing: ended))
            while day <= last {
                let report = try await statements.reconcile(channel, day: day)
                #expect(report.status != .waiting, "\(channel) \(day): \(report.waitingFor ?? "")")
                matched += report.matched.count + report.refundsMatched.count
                recovered += report.recovered.count + report.refundsRecovered.count
                flagged += report.flagged.count
                for discrepancy in report.discrepancies {
                    Issue.record("statement \(channel) \(day): \(discrepancy.detail)")
                }
                day = day.next
            }
            lines.append("\(channel.rawValue) \(matched + recovered - before)")
            #expect(matched + recovered > before, "\(channel): no line on its statements")
        }
        print(
            "chaos[\(engine.rawValue), \(replicas) replica(s)]: statements: matched \(matched), recovered \(recovered), flagged \(flagged) (lines: \(lines.joined(separator: ", ")))"
        )
        #expect(matched > 0 && flagged == 0)
    }

    /// Routers waiting to be opened as test clients, one inside the other's test closure. Each router is handed
    /// to exactly one `Application` and never touched again, so passing them along is safe.
    struct PendingRouters: @unchecked Sendable {
        var routers: [Router<OrderSafeRequestContext>]
    }

    /// Opens a test client on each router (the replicas) and runs `body` with all of them.
    static func withClients<R: Sendable>(
        _ routers: [Router<OrderSafeRequestContext>],
        _ body: @escaping @Sendable ([any TestClientProtocol]) async throws -> R
    ) async throws -> R {
        try await open(PendingRouters(routers: routers), [], body)
    }

    private static func open<R: Sendable>(
        _ pending: PendingRouters, _ clients: [any TestClientProtocol],
        _ body: @escaping @Sendable ([any TestClientProtocol]) async throws -> R
    ) async throws -> R {
        guard let router = pending.routers.first else { return try await body(clients) }
        let rest = PendingRouters(routers: Array(pending.routers.dropFirst()))
        let result = Mutex<R?>(nil)
        try await Application(router: router, logger: TestLog.logger).test(.router) { client in
            let value = try await open(rest, clients + [client], body)
            result.withLock { $0 = value }
        }
        return result.withLock { $0! }
    }

    private func world(
        clients: [any TestClientProtocol], runners: [JobRunner], sandbox: SandboxProviders, clock: ManualClock,
        database: LedgerDatabase
    ) async throws -> ChaosTally.Counts {
        let ledger = SQLLedger(database: database)
        let shared = Shared(seed: seed)
        var tokens: [String] = []
        for index in 0..<users { tokens.append(try await TestServer.token("user\(index)", lifetime: 365 * 86400)) }
        let app = ChaosApp(clients: clients, tokens: tokens, shared: shared, sandbox: sandbox)
        await sandbox.alipay.setNotificationSink { _, body in
            await app.deliver(
                uri: "/v1/notify/alipay", headers: [.contentType: "application/x-www-form-urlencoded"],
                body: Array(body.utf8)
            ) {
                $0.status == .ok && String(buffer: $0.body) == "success"
            }
        }
        await sandbox.wechatpay.setNotificationSink { _, headers, body in
            var fields: HTTPFields = [.contentType: "application/json"]
            for (name, value) in headers { if let field = HTTPField.Name(name) { fields[field] = value } }
            return await app.deliver(uri: "/v1/notify/wechatpay", headers: fields, body: body) {
                $0.status == .noContent
            }
        }

        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<purchases {
                if index >= concurrency { try await group.next() }
                group.addTask {
                    var random = SeededRandom(state: seed &+ UInt64(index) &* 0x2545_F491_4F6C_DD1D)
                    try await app.purchase(index: index, seed: seed, random: &random)
                }
            }
            try await group.waitForAll()
        }

        // The providers finish their deliveries (retry schedules compressed), held App Store notifications arrive last.
        await sandbox.alipay.releaseHeldNotification()
        await sandbox.wechatpay.releaseHeldNotification()
        await sandbox.alipay.settle()
        await sandbox.wechatpay.settle()
        for payload in shared.expectations.withLock({ $0.heldNotifications }) { await app.notifyAppStore(payload) }
        // The apps relaunch and finish what they had not.
        let refunded = shared.expectations.withLock { $0.refundedTransactions }
        for (user, jws, transactionID) in shared.expectations.withLock({ $0.unfinished }) {
            let result = try await app.submit(jws, token: tokens[Int(user.dropFirst(4))!], seed: seed)
            // Recorded either way (the app finishes it); a refunded one as refunded.
            #expect(
                result.verdict == .recorded && (result.order?.status == .refunded) == refunded.contains(transactionID),
                "relaunch submission: \(result)")
        }
        // Time passes; every replica's worker reconciles.
        for _ in 0..<240 {
            clock.advance(by: 60)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for runner in runners { group.addTask { _ = try await runner.runDue() } }
                try await group.waitForAll()
            }
            let unsettled = try await database.withSession { db in
                try await db.raw("SELECT COUNT(*) AS n FROM jobs WHERE kind = 'query_order' AND done_at IS NULL")
                    .first()!
                    .decode(column: "n", as: Int64.self)
            }
            if unsettled == 0 { break }
        }
        await sandbox.alipay.settle()
        await sandbox.wechatpay.settle()

        try await check(
            ledger: ledger, database: database, sandbox: sandbox, expectations: shared.expectations.withLock { $0 })
        return shared.tally.snapshot
    }

    /// Everything the sandboxes say was paid is fulfilled once, for the right user, for the right amount; nothing
    /// else is; balances add up; abandoned orders are closed; no order is flagged.
    private func check(
        ledger: SQLLedger, database: LedgerDatabase, sandbox: SandboxProviders, expectations: Expectations
    ) async throws {
        var paidBoxes: [String: Int64] = [:]
        var coins: [String: Int64] = [:]
        let providerPayments: [(OrderSafeModel.Channel, [SandboxPaymentRecord])] = [
            (.alipay, await sandbox.alipay.payments), (.wechatPay, await sandbox.wechatpay.payments),
            (.appStore, try await sandbox.appStore.payments),
        ]
        for (channel, records) in providerPayments {
            for record in records {
                guard
                    let payment = try await ledger.payment(
                        channel: channel, providerTransactionID: record.providerTransactionID)
                else {
                    Issue.record("\(channel.rawValue) payment \(record.providerTransactionID) was lost")
                    continue
                }
                guard let order = try await ledger.order(number: payment.orderNo) else {
                    Issue.record("no order \(payment.orderNo)")
                    continue
                }
                let refunded =
                    channel == .appStore && expectations.refundedTransactions.contains(record.providerTransactionID)
                #expect(
                    order.status == (refunded ? .refunded : .fulfilled), "\(order.orderNo) is \(order.status.rawValue)")
                if channel == .appStore {
                    #expect(
                        payment.userID == expectations.transactionOwners[record.providerTransactionID],
                        "App Store \(record.providerTransactionID) credited to \(payment.userID)")
                    if !refunded, !expectations.subscriptionTransactions.contains(record.providerTransactionID) {
                        coins[payment.userID, default: 0] += 60
                    }
                } else {
                    #expect(payment.orderNo == record.orderReference)
                    #expect(
                        payment.userID == expectations.orderOwners[payment.orderNo],
                        "\(payment.orderNo) credited to \(payment.userID)")
                    #expect(payment.amount == record.amount)
                    paidBoxes[payment.userID, default: 0] += 1
                }
            }
        }
        let paidCount = providerPayments.reduce(0) { $0 + $1.1.count }
        let (recorded, fulfilled, flagged) = try await database.withSession { db in
            (
                try await db.raw("SELECT COUNT(*) AS n FROM payment_transactions").first()!.decode(
                    column: "n", as: Int64.self),
                try await db.raw("SELECT COUNT(*) AS n FROM orders WHERE status = 'fulfilled'").first()!.decode(
                    column: "n", as: Int64.self),
                try await db.raw("SELECT order_no FROM orders WHERE status = 'flagged'").all().map {
                    try $0.decode(column: "order_no", as: String.self)
                }
            )
        }
        #expect(Int(recorded) == paidCount, "the ledger records \(recorded) payments; the providers took \(paidCount)")
        let refundedCount = expectations.refundedTransactions.count
        #expect(
            Int(fulfilled) == paidCount - refundedCount,
            "\(fulfilled) orders fulfilled for \(paidCount) payments, \(refundedCount) refunded")
        for orderNo in flagged {
            Issue.record(
                "flagged without explanation: \(orderNo) \(try await ledger.events(orderNo: orderNo).map(\.kind.rawValue))"
            )
        }
        for orderNo in expectations.abandonedOrders {
            let status = try await ledger.order(number: orderNo)?.status
            #expect(status == .closed, "abandoned \(orderNo) is \(status?.rawValue ?? "missing")")
        }
        for index in 0..<users {
            let holdings = try await ledger.holdings(userID: "user\(index)", at: TestServer.now)
            let balance = { (name: String) in holdings.balances.first { $0.name == name }?.amount ?? 0 }
            #expect(balance("gift_boxes") == paidBoxes["user\(index)", default: 0], "user\(index) gift boxes")
            #expect(balance("coins") == coins["user\(index)", default: 0], "user\(index) coins")
        }
        print(
            "chaos[\(engine.rawValue), \(replicas) replica(s)]: \(paidCount) paid, \(fulfilled) fulfilled, \(recorded) recorded, \(flagged.count) flagged"
        )
    }
}
