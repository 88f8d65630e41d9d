import Engine
import Foundation
import Ledger
import Logging
import OrderSafeModel
import Sandbox
import Synchronization

/// `ordersafe demo`: a narrated end-to-end run on the built-in sandboxes, with the order engine the server runs —
/// an App Store purchase whose app crashes before finishing it, an Alipay payment whose notification is lost, a
/// WeChat Pay payment whose notification arrives twice, a refund — ending with the ledger's totals and the
/// invariant checks. Everything lives in a temporary folder; time is simulated, so it takes seconds.
public struct OrderSafeDemo {
    let say: @Sendable (String) -> Void

    public init(say: @escaping @Sendable (String) -> Void) {
        self.say = say
    }

    /// Runs the story; returns whether every invariant held.
    public func run(folder: URL) async throws -> Bool {
        let settings = try await SettingsLoader.load(environment: [
            "ORDERSAFE_SERVER_DATA_DIR": folder.path,
            "ORDERSAFE_DATABASE_URL": "sqlite:" + folder.appendingPathComponent("demo.sqlite").path,
            "ORDERSAFE_SERVER_PORT": "9",
        ])
        var logger = Logger(label: "ordersafe.demo")
        logger.logLevel = .critical
        let clock = DemoClock()
        say(
            "▶ Setting up: a fresh SQLite ledger and the sandbox App Store, Alipay and WeChat Pay (keys in \(folder.path)/sandbox)"
        )
        let sandbox = try SandboxProviders(settings: settings.server, clock: clock, timeScale: 1e-4, logger: logger)
        return try await OrderSafeComponents.with(
            settings: settings, clock: clock, random: { UInt64.random(in: .min ... .max) }, logger: logger,
            sandbox: sandbox
        ) { app in
            try await story(app, sandbox: sandbox, clock: clock)
        }
    }

    private func story(_ app: OrderSafeComponents, sandbox: SandboxProviders, clock: DemoClock) async throws -> Bool {
        guard let appStore = app.appStore, let alipay = app.alipay, let wechatpay = app.wechatpay else {
            throw DemoError("the demo needs all three sandbox channels")
        }
        // The providers deliver their notifications straight to the engine's handlers, as the server's routes would.
        await sandbox.alipay.setNotificationSink { _, body in
            (try? await alipay.handleNotification(
                body: Array(body.utf8), headers: ["content-type": "application/x-www-form-urlencoded"])) == .success
        }
        await sandbox.wechatpay.setNotificationSink { _, headers, body in
            (try? await wechatpay.handleNotification(headers: headers, body: body)) == .accepted
        }

        say("\n1. App Store — alice buys 60 coins; the app crashes before it can tell the server")
        let coins = try await app.orders.createOrder(
            CreateOrderRequest(productID: "coins_60", channel: .appStore), userID: "alice", idempotencyKey: "demo-1"
        ).order
        say(
            "   order \(coins.orderNo) created; its UUID goes to StoreKit as appAccountToken \(coins.orderUUID.uuidString.lowercased())"
        )
        let (transactionID, jws) = try await sandbox.appStore.purchase(
            productID: "com.example.ordersafe.coins60", appAccountToken: coins.orderUUID)
        say(
            "   StoreKit: purchased, transaction \(transactionID) — 💥 the app is killed; the transaction stays unfinished"
        )
        say("   relaunch: the transaction observer finds it and submits the signed transaction")
        for attempt in 1...2 {
            let response = try await appStore.submit(AppStoreSubmission(signedTransaction: jws), userID: "alice")
            say(
                "   submission \(attempt): \(response.verdict.rawValue) against \(response.transactions.first?.order?.orderNo ?? "-") → the app finishes the transaction"
            )
        }
        try await show("alice", app)

        say("\n2. Alipay — bob buys a gift box; Alipay's notification never arrives")
        let box = try await app.orders.createOrder(
            CreateOrderRequest(productID: "gift_box", channel: .alipay), userID: "bob", idempotencyKey: "demo-2"
        ).order
        await sandbox.alipay.injectNotificationFault(.drop)
        _ = try await sandbox.alipay.open(orderString: try alipay.invocation(for: box).orderString)
        await sandbox.alipay.settle()
        say("   bob paid in Alipay; the order is still \(try await status(box, app)) — the notification was lost")
        clock.advance(by: 61)
        let tally = try await app.runner.runDue()
        say(
            "   a minute later the reconciliation worker queries Alipay (\(tally.done) job): the order is \(try await status(box, app))"
        )
        try await show("bob", app)

        say("\n3. WeChat Pay — carol buys a gift box; WeChat Pay sends its notification twice")
        let gift = try await app.orders.createOrder(
            CreateOrderRequest(productID: "gift_box", channel: .wechatPay), userID: "carol", idempotencyKey: "demo-3"
        ).order
        await sandbox.wechatpay.injectNotificationFault(.duplicate)
        _ = try await sandbox.wechatpay.open(try await wechatpay.invocation(for: gift))
        await sandbox.wechatpay.settle()
        let deliveries = await sandbox.wechatpay.deliveries.filter { $0.outTradeNo == gift.orderNo && $0.accepted }
            .count
        say(
            "   WeChat Pay delivered \(deliveries) notifications; the order is \(try await status(gift, app)), credited once:"
        )
        try await show("carol", app)

        say("\n4. Refund — the merchant refunds carol's gift box through WeChat Pay")
        let (_, outcome) = try await app.refunds.refund(orderNo: gift.orderNo, reason: "demo refund")
        say("   WeChat Pay accepted the refund; the ledger took back exactly what was granted: \(outcome)")
        try await show("carol", app)

        say("\n5. The ledger against what the providers say was paid")
        return try await checkInvariants(app, sandbox: sandbox)
    }

    private func status(_ order: Order, _ app: OrderSafeComponents) async throws -> String {
        try await app.ledger.order(number: order.orderNo)?.status.rawValue ?? "missing"
    }

    private func show(_ user: String, _ app: OrderSafeComponents) async throws {
        let holdings = try await app.ledger.holdings(userID: user, at: app.clock.now())
        let balances = holdings.balances.map { "\($0.name) \($0.amount)" }.joined(separator: ", ")
        say("   \(user) now holds: \(balances.isEmpty ? "nothing" : balances)")
    }

    private func checkInvariants(_ app: OrderSafeComponents, sandbox: SandboxProviders) async throws -> Bool {
        var passed = true
        func check(_ condition: Bool, _ text: String) {
            say("   \(condition ? "✓" : "✗") \(text)")
            passed = passed && condition
        }
        let providers: [(Channel, [SandboxPaymentRecord])] = [
            (.appStore, try await sandbox.appStore.payments), (.alipay, await sandbox.alipay.payments),
            (.wechatPay, await sandbox.wechatpay.payments),
        ]
        var recorded = 0
        for (channel, records) in providers {
            for record in records
            where try await app.ledger.payment(channel: channel, providerTransactionID: record.providerTransactionID)
                != nil
            {
                recorded += 1
            }
        }
        let paid = providers.reduce(0) { $0 + $1.1.count }
        let totals = try await app.database.withSession { db in
            try await db.raw(
                """
                SELECT (SELECT COUNT(*) FROM payment_transactions) AS payments,
                       (SELECT COUNT(*) FROM payment_transactions WHERE reversed_at IS NOT NULL) AS reversed,
                       (SELECT COUNT(*) FROM orders WHERE status = 'flagged') AS flagged,
                       (SELECT COUNT(*) FROM inbox) AS inbox
                """
            ).first().map { row in
                (
                    try row.decode(column: "payments", as: Int.self), try row.decode(column: "reversed", as: Int.self),
                    try row.decode(column: "flagged", as: Int.self), try row.decode(column: "inbox", as: Int.self)
                )
            }
        }
        guard let (payments, reversed, flagged, inbox) = totals else { throw DemoError("the ledger has no totals") }
        say(
            "   totals: \(paid) payments at the providers, \(payments) recorded, \(reversed) refunded, \(inbox) raw signals (notifications, app submissions) kept in the inbox"
        )
        check(recorded == paid, "every payment a provider took is in the ledger (\(recorded) of \(paid))")
        check(payments == paid, "no payment is recorded twice, none without a provider's word (\(payments) recorded)")
        check(flagged == 0, "no order needs a human (\(flagged) flagged)")
        let coins = try await app.ledger.holdings(userID: "alice", at: app.clock.now()).balances.first {
            $0.name == "coins"
        }?.amount
        check(coins == 60, "alice has her 60 coins once, though the app crashed and submitted twice")
        return passed
    }
}

struct DemoError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The demo's clock: real time, moved forward when the story waits for the reconciliation worker.
final class DemoClock: WallClock {
    private let offset = Mutex<TimeInterval>(0)

    func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    func advance(by seconds: TimeInterval) {
        offset.withLock { $0 += seconds }
    }
}
