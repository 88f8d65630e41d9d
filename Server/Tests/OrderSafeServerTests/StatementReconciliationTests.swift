import Alipay
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Sandbox
import Testing
import WeChatPay

@testable import Engine
@testable import OrderSafeServer

@Suite("Statement reconciliation: the providers' daily statements checked against the ledger")
struct StatementReconciliationTests {
    static let beijing = 8 * 3600

    /// Moves `clock` to `hour`:05 of the next day in the zone `utcOffset` (Beijing unless told).
    static func nextMorning(_ clock: ManualClock, hour: Int = 10, utcOffset: Int = beijing) {
        let seconds = (Int(clock.now().timeIntervalSince1970) + utcOffset) % 86400
        clock.advance(by: TimeInterval(86400 - seconds + hour * 3600 + 300))
    }

    @Test(
        "WeChat Pay: payments and a refund whose notifications were lost, never reported by the app, are recovered from the statement once; an unknown order is flagged",
        arguments: TestEngine.available)
    func weChatPayDay(engine: TestEngine) async throws {
        let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
        try await TestServer.withComponents(engine: engine) { client, components, clock in
            let day = StatementDay(containing: clock.now(), utcOffset: Self.beijing)
            // Three paid orders: nothing reaches the server (no notification, no report from the app, no query).
            var paid: [OrderResponse] = []
            for _ in 0..<3 {
                let created = try await ReconciliationFlowTests.order(client, alice, channel: "wechatpay")
                try await ReconciliationFlowTests.pay(client, created)
                paid.append(created)
            }
            let unpaid = try await ReconciliationFlowTests.order(client, alice, channel: "wechatpay")
            // The merchant refunds the third payment at WeChat Pay (its portal); that notification is lost too.
            let payments = try #require(components.channels.running(WeChatPayChannel.self)?.payments)
            _ = try await payments.client.refund(
                WeChatPayRefundRequest(
                    outTradeNo: paid[2].order.orderNo, outRefundNo: "RF-PORTAL-1", refund: paid[2].order.amount,
                    total: paid[2].order.amount))
            // Someone else's trade on the merchant's account: not an order of this ledger.
            _ = try await payments.client.prepayApp(
                WeChatPayAppOrder(
                    outTradeNo: "OS-NOT-OURS-1", description: "x", amount: Money(amountMinor: 100, currency: .cny),
                    notifyURL: "https://merchant.example/notify"))
            try await #require(components.sandbox).wechatpay.pay(outTradeNo: "OS-NOT-OURS-1")
            for created in paid + [unpaid] {
                #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) == .created)
            }

            // Before WeChat Pay publishes (10:00 the next day): the day waits.
            let early = try await components.statements.reconcile(.wechatPay, day: day)
            #expect(early.status == .waiting && early.waitingFor?.contains("STATEMENT_CREATING") == true)

            Self.nextMorning(clock)
            let report = try await components.statements.reconcile(.wechatPay, day: day)
            #expect(report.status == .discrepancies)
            #expect(
                report.recovered.count == 3
                    && report.recovered.amountMinor["CNY"] == 3 * paid[0].order.amount.amountMinor)
            #expect(report.refundsRecovered.count == 1 && report.matched.count == 0)
            #expect(report.flagged.count == 1)
            let flagged = try #require(report.discrepancies.first)
            #expect(flagged.kind == .unknownOrder && flagged.orderNo == "OS-NOT-OURS-1" && flagged.line != nil)
            #expect(report.statementTotals?.rows == 5)
            // The account's movements of the day: the four payments credited and the refund paid out, as billed.
            let fundFlow = try #require(report.fundFlow)
            #expect(fundFlow.status == .checked && fundFlow.matched == 5 && fundFlow.differing == 0)
            #expect(fundFlow.onlyInTradeBill == 0 && fundFlow.onlyInFundFlow == 0 && fundFlow.rows == 10)
            for created in paid.prefix(2) {
                #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) == .fulfilled)
            }
            #expect(try await ReconciliationFlowTests.status(client, alice, paid[2].order.orderNo) == .refunded)
            #expect(try await ReconciliationFlowTests.status(client, alice, unpaid.order.orderNo) == .created)
            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            #expect(try holdings.decoded(HoldingsResponse.self).balances == [Balance(name: "gift_boxes", amount: 2)])
            let events = try await components.ledger.events(orderNo: paid[0].order.orderNo)
            #expect(events.contains { $0.cause == .reconciliation })

            // The same day again: nothing new is recorded, and the report still says what the statement recovered.
            let again = try await components.statements.reconcile(.wechatPay, day: day)
            #expect(again.recovered == report.recovered && again.refundsRecovered == report.refundsRecovered)
            #expect(again.matched.count == 0 && again.flagged.count == 1)
            #expect(try await components.ledger.events(orderNo: paid[0].order.orderNo) == events)

            // The admin API: the list, the day, a run by hand, and clear refusals.
            let admin = TestServer.bearer(TestServer.adminKey)
            let list = try await client.execute(uri: "/v1/admin/statements", method: .get, headers: admin)
            #expect(list.status == .ok)
            let listed = try JSONSerialization.jsonObject(with: Data(buffer: list.body)) as? [String: Any]
            let first = try #require((listed?["statements"] as? [[String: Any]])?.first)
            #expect(first["day"] as? String == day.description && first["status"] as? String == "discrepancies")
            let one = try await client.execute(
                uri: "/v1/admin/statements/wechatpay/\(day)", method: .get, headers: admin)
            #expect(one.status == .ok && String(buffer: one.body).contains("OS-NOT-OURS-1"))
            let run = try await client.execute(
                uri: "/v1/admin/statements/wechatpay/\(day)/run", method: .post, headers: admin)
            #expect(run.status == .ok && String(buffer: run.body).contains(#""status":"discrepancies""#))
            let missing = try await client.execute(
                uri: "/v1/admin/statements/wechatpay/2026-01-01", method: .get, headers: admin)
            #expect(missing.status == .notFound && String(buffer: missing.body).contains("statement_not_found"))
            for bad in ["wechatpay/2026-13-01", "Pay-Pal/2026-11-18", "wechatpay/20261118"] {
                let refused = try await client.execute(uri: "/v1/admin/statements/\(bad)", method: .get, headers: admin)
                #expect(refused.status == .badRequest, "\(bad)")
            }
            // A channel name the server has no channel of: no such statement.
            let unknown = try await client.execute(
                uri: "/v1/admin/statements/paypal/2026-11-18", method: .get, headers: admin)
            #expect(unknown.status == .notFound)
            let anonymous = try await client.execute(uri: "/v1/admin/statements", method: .get)
            #expect(anonymous.status == .unauthorized)

            // The console: the days, one day's differences, and the CSV a finance team opens in Excel.
            let browser = ConsoleClient(client)
            try await browser.signIn(TestServer.adminKey)
            let days = try await browser.get("/admin/statements")
            #expect(days.status == .ok && days.html.contains("/admin/statements/wechatpay/\(day)"))
            #expect(days.html.contains("differences") && days.html.contains("CNY"))
            let page = try await browser.get("/admin/statements/wechatpay/\(day)")
            #expect(page.status == .ok && page.html.contains("OS-NOT-OURS-1") && page.html.contains("unknown order"))
            #expect(page.html.contains("CNY 1.00") && page.html.contains("/admin/statements/wechatpay/\(day)/csv"))
            let csv = try await browser.get("/admin/statements/wechatpay/\(day)/csv")
            #expect(csv.status == .ok && csv.html.hasPrefix("\u{FEFF}day,channel,kind,order_no,transaction_id"))
            #expect(csv.html.contains("\r\n\(day),wechatpay,unknown_order,OS-NOT-OURS-1,"))
            #expect(try await browser.get("/admin/statements/wechatpay/2026-01-01").status == .notFound)
            #expect(try await browser.get("/admin/statements/paypal/\(day)/csv").status == .notFound)

            // The next day: what the statement recovered was recorded this morning, and WeChat Pay says it was paid
            // (and the refund made, not when) before: on yesterday's statement, not today's.
            clock.advance(by: 86400)
            let next = try await components.statements.reconcile(.wechatPay, day: day.next)
            #expect(next.status == .balanced && next.otherDay == 3 && next.refundsOtherDay == 1)
        }
    }

    @Test(
        "Alipay: payments and a refund whose notifications were lost, never reported by the app, are recovered from its zipped GBK bill once; an unknown order is flagged",
        arguments: TestEngine.available)
    func alipayDay(engine: TestEngine) async throws {
        let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
        try await TestServer.withComponents(engine: engine) { client, components, clock in
            let day = StatementDay(containing: clock.now(), utcOffset: Self.beijing)
            // Queries see nothing for two days: only the bill shows these payments.
            let lag = try await client.execute(
                uri: "/sandbox/alipay/faults", method: .post, body: ByteBuffer(string: #"{"query_lag_seconds": 3600}"#))
            #expect(lag.status == .ok)
            var paid: [OrderResponse] = []
            for _ in 0..<4 {
                let created = try await ReconciliationFlowTests.order(client, alice, channel: "alipay")
                try await ReconciliationFlowTests.pay(client, created)
                paid.append(created)
            }
            // Asked at once, Alipay still says the buyer is paying (the lag).
            #expect(try await components.reconciler.settle(orderNo: paid[0].order.orderNo)?.status == .created)
            // The merchant refunds two payments at Alipay (its portal), those notifications lost too: the third after
            // a query recorded it, the fourth before anyone heard of it (Alipay then answers TRADE_CLOSED).
            let payments = try #require(components.channels.running(AlipayChannel.self)?.payments)
            let gateway = try #require(payments.gateway)
            clock.advance(by: 3601)
            _ = try await components.reconciler.settle(orderNo: paid[2].order.orderNo)
            #expect(try await ReconciliationFlowTests.status(client, alice, paid[2].order.orderNo) == .fulfilled)
            for (index, request) in [(2, "RF-PORTAL-A1"), (3, "RF-PORTAL-A2")] {
                _ = try await gateway.refund(
                    outTradeNo: paid[index].order.orderNo, amount: paid[index].order.amount, outRequestNo: request)
            }
            // Someone else's trade on the merchant's account.
            let foreign = try AlipayRequestSigner(credentials: payments.credentials).orderString(
                for: AlipayAppPayOrder(
                    outTradeNo: "OS-NOT-OURS-A1", amount: Money(amountMinor: 100, currency: .cny), subject: "x",
                    notifyURL: "https://merchant.example/notify"),
                at: clock.now())
            try await #require(components.sandbox).alipay.open(orderString: foreign)
            for created in [paid[0], paid[1], paid[3]] {
                #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) == .created)
            }

            // Before Alipay writes the bill (by 09:00 the next day): isp.bill_not_exist, and the day waits.
            let early = try await components.statements.reconcile(.alipay, day: day)
            #expect(early.status == .waiting && early.waitingFor?.contains("isp.bill_not_exist") == true)

            Self.nextMorning(clock)
            let report = try await components.statements.reconcile(.alipay, day: day)
            #expect(report.status == .discrepancies)
            #expect(
                report.recovered.count == 3
                    && report.recovered.amountMinor["CNY"] == 3 * paid[0].order.amount.amountMinor)
            // The third's refund, confirmed by Alipay's refund query; the fourth's, recorded with its payment by the
            // trade query that recovered it.
            #expect(report.matched.count == 1 && report.refundsRecovered.count == 1 && report.refundsMatched.count == 1)
            #expect(report.flagged.count == 1)
            let flagged = try #require(report.discrepancies.first)
            #expect(flagged.kind == .unknownOrder && flagged.orderNo == "OS-NOT-OURS-A1" && flagged.line != nil)
            #expect(report.statementTotals?.rows == 7)
            // 0.6% of each payment, the refunded ones' returned; the foreign fen's fee rounds up to 1.
            let fee = (paid[0].order.amount.amountMinor * 6 + 500) / 1000
            #expect(report.statementTotals?.feeMinor == 2 * fee + 1)
            for created in paid.prefix(2) {
                #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) == .fulfilled)
            }
            for created in paid.suffix(2) {
                #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) == .refunded)
            }
            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            #expect(try holdings.decoded(HoldingsResponse.self).balances == [Balance(name: "gift_boxes", amount: 2)])
            let events = try await components.ledger.events(orderNo: paid[0].order.orderNo)
            #expect(events.contains { $0.cause == .reconciliation })

            // Again: nothing new, the same report.
            let again = try await components.statements.reconcile(.alipay, day: day)
            #expect(again.recovered == report.recovered && again.refundsRecovered == report.refundsRecovered)
            #expect(again.flagged.count == 1 && again.matched.count == 1)
            #expect(try await components.ledger.events(orderNo: paid[0].order.orderNo) == events)
            let admin = TestServer.bearer(TestServer.adminKey)
            let one = try await client.execute(uri: "/v1/admin/statements/alipay/\(day)", method: .get, headers: admin)
            #expect(one.status == .ok && String(buffer: one.body).contains("OS-NOT-OURS-A1"))

            // A day without a trade: no bill until noon, then an empty day.
            let empty = day.next
            Self.nextMorning(clock, hour: 11)
            #expect(try await components.statements.reconcile(.alipay, day: empty).status == .waiting)
            clock.advance(by: 3600)
            let quiet = try await components.statements.reconcile(.alipay, day: empty)
            #expect(quiet.status == .balanced && quiet.statementTotals?.rows == 0)
            // What the bill recovered was recorded that morning; Alipay dates the payments the day before and says
            // the two refunds were made (TRADE_CLOSED), not when: both on the day before's bill.
            #expect(quiet.otherDay == 3 && quiet.refundsOtherDay == 2)
        }
    }

    @Test(
        "App Store: purchases whose notifications were lost and that the app never submitted are recovered from the App Store's histories once, a refund too; a purchase no order or chain owns is flagged",
        arguments: TestEngine.available)
    func appStoreDay(engine: TestEngine) async throws {
        let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
        try await TestServer.withComponents(engine: engine) { client, components, clock in
            let day = StatementDay(containing: clock.now(), utcOffset: 0)
            let store = try #require(components.sandbox).appStore
            // One purchase the app submitted.
            let submitted = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            let (_, jws) = try await store.purchase(
                productID: AppStoreFlowTests.coins, appAccountToken: submitted.orderUUID)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).order?.status == .fulfilled)
            // The store signs what the buyer paid, in the storefront's currency.
            let payments = try #require(components.channels.running(AppStoreChannel.self)?.payments)
            #expect(
                AppStorePurchase.charged(try await payments.verifier.verifyTransaction(jws)) == submitted.amount)
            // Three the app never submitted (it was killed; the phone was lost), their notifications lost (nothing
            // posts them here); Apple refunds the third, that notification lost too.
            var lost: [(order: Order, transactionID: String)] = []
            for _ in 0..<3 {
                let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
                let (id, _) = try await store.purchase(
                    productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
                lost.append((order, id))
            }
            try await store.refund(transactionID: lost[2].transactionID)
            // A purchase that names no order and renews no chain the ledger knows.
            let (stranger, _) = try await store.purchase(productID: AppStoreFlowTests.coins)
            // A family member's access to a purchase shared with them, then revoked: no money, on no statement.
            let bob = try await TestServer.token("bob", lifetime: 30 * 86400)
            let (sharedID, shared) = try await store.purchase(
                productID: "com.example.ordersafe.removeads", type: "Non-Consumable", familyShared: true)
            #expect(try await AppStoreFlowTests.submit(client, token: bob, jws: shared).verdict == .recorded)
            let revoked = try await store.refund(transactionID: sharedID)
            #expect(try await AppStoreFlowTests.submit(client, token: bob, jws: revoked).verdict == .recorded)

            // The day is listed an hour after it ends (UTC).
            let early = try await components.statements.reconcile(.appStore, day: day)
            #expect(early.status == .waiting)

            Self.nextMorning(clock, utcOffset: 0)
            let report = try await components.statements.reconcile(.appStore, day: day)
            #expect(report.status == .discrepancies && report.statementTotals == nil)
            #expect(report.matched.count == 1 && report.recovered.count == 3)
            #expect(report.recovered.amountMinor == ["CNY": 3 * submitted.amount.amountMinor])
            #expect(report.recoveredTransactions.sorted() == lost.map(\.transactionID).sorted())
            #expect(report.refundsMatched.count == 1 && report.refundsRecovered.count == 0)
            #expect(report.shared == 2 && report.flagged.count == 1)
            let flagged = try #require(report.discrepancies.first)
            #expect(flagged.kind == .unknownOrder && flagged.transactionID == stranger)
            for (order, _) in lost.prefix(2) {
                #expect(try await ReconciliationFlowTests.status(client, alice, order.orderNo) == .fulfilled)
            }
            #expect(try await ReconciliationFlowTests.status(client, alice, lost[2].order.orderNo) == .refunded)
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 3 * 60)
            let events = try await components.ledger.events(orderNo: lost[0].order.orderNo)
            #expect(events.contains { $0.cause == .reconciliation })

            // Again: nothing new, the same report.
            let again = try await components.statements.reconcile(.appStore, day: day)
            #expect(again.recovered == report.recovered && again.matched == report.matched)
            #expect(again.refundsMatched == report.refundsMatched && again.flagged == report.flagged)
            #expect(try await components.ledger.events(orderNo: lost[0].order.orderNo) == events)
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 3 * 60)

            // The next day: what the histories recovered was recorded this morning; the App Store dates the purchases
            // and the refund the day before.
            clock.advance(by: 86400)
            let next = try await components.statements.reconcile(.appStore, day: day.next)
            #expect(next.status == .balanced && next.otherDay == 3 && next.refundsOtherDay == 1)
        }
    }

    /// `token`'s user orders the coins, buys them from the sandbox App Store and the app submits the purchase.
    static func buyAndSubmit(_ client: any TestClientProtocol, _ store: SandboxAppStore, token: String) async throws {
        let order = try await TestServer.createOrder(client, token: token).decoded(OrderResponse.self).order
        let (_, jws) = try await store.purchase(productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
        #expect(try await AppStoreFlowTests.submit(client, token: token, jws: jws).verdict == .recorded)
    }

    @Test(
        "App Store: a day asks Apple for the histories of the day's possible buyers only, not of every customer ever seen; a rate limit on the way is waited out",
        arguments: TestEngine.available)
    func appStoreDayCostFollowsItsBuyers(engine: TestEngine) async throws {
        try await TestServer.withComponents(engine: engine) { client, components, clock in
            let store = try #require(components.sandbox).appStore
            // Sixty customers who bought three days ago, and nothing since.
            var tokens: [String] = []
            for index in 0..<60 {
                let token = try await TestServer.token("customer-\(index)", lifetime: 30 * 86400)
                try await Self.buyAndSubmit(client, store, token: token)
                tokens.append(token)
            }
            clock.advance(by: 3 * 86400)
            // Today: one of them buys again, the app submitting it; another's purchase is never submitted (its
            // notification lost); a newcomer buys.
            let day = StatementDay(containing: clock.now(), utcOffset: 0)
            for token in [tokens[7], try await TestServer.token("newcomer", lifetime: 30 * 86400)] {
                try await Self.buyAndSubmit(client, store, token: token)
            }
            let lostOrder = try await TestServer.createOrder(client, token: tokens[11]).decoded(OrderResponse.self)
                .order
            let (lostID, _) = try await store.purchase(
                productID: AppStoreFlowTests.coins, appAccountToken: lostOrder.orderUUID)

            Self.nextMorning(clock, utcOffset: 0)
            await store.setRateLimit(perSecond: 2)  // Apple's 429 on the way: waited out, nothing lost
            let before = await store.serverAPICalls["history", default: 0]
            let report = try await components.statements.reconcile(.appStore, day: day)
            let asked = await store.serverAPICalls["history", default: 0] - before
            #expect(asked == 3, "one history per customer active that day, not one per customer ever seen: \(asked)")
            #expect(report.matched.count == 2 && report.recovered.count == 1, "\(report.status)")
            #expect(report.recoveredTransactions == [lostID])
        }
    }

    @Test(
        "App Store: a day stopped midway (the key refused after four histories) resumes where it stopped: no history is asked twice, the lost purchase recovered once",
        arguments: TestEngine.available)
    func appStoreDayResumesWhereItStopped(engine: TestEngine) async throws {
        try await TestServer.withComponents(engine: engine) { client, components, clock in
            let store = try #require(components.sandbox).appStore
            let day = StatementDay(containing: clock.now(), utcOffset: 0)
            // Ten customers buy today, the app submitting each; an eleventh's purchase is never submitted.
            for index in 0..<10 {
                let token = try await TestServer.token("buyer-\(index)", lifetime: 30 * 86400)
                try await Self.buyAndSubmit(client, store, token: token)
            }
            let lostToken = try await TestServer.token("buyer-lost", lifetime: 30 * 86400)
            let lostOrder = try await TestServer.createOrder(client, token: lostToken).decoded(OrderResponse.self).order
            let (lostID, _) = try await store.purchase(
                productID: AppStoreFlowTests.coins, appAccountToken: lostOrder.orderUUID)

            Self.nextMorning(clock, utcOffset: 0)
            let start = await store.serverAPICalls["history", default: 0]
            await store.refuseServerAPI(after: 4, endpoint: "history")
            await #expect(throws: (any Error).self) { try await components.statements.reconcile(.appStore, day: day) }
            let first = await store.serverAPICalls["history", default: 0] - start
            #expect(first == 4, "four histories answered before the key was refused: \(first)")

            await store.refuseServerAPI(after: nil, endpoint: "history")
            let report = try await components.statements.reconcile(.appStore, day: day)
            let second = await store.serverAPICalls["history", default: 0] - start - first
            // One history per buyer with a transaction the ledger knows (the lost purchase comes from the
            // notification history): ten, four asked before.
            #expect(second == 10 - 4, "the rest only, not the day again: \(second)")
            #expect(report.matched.count == 10 && report.recoveredTransactions == [lostID], "\(report.status)")

            // Listed whole, the day keeps nothing: asked again, it asks Apple again, the recovered buyer's too.
            let again = try await components.statements.reconcile(.appStore, day: day)
            #expect(again.recoveredTransactions == [lostID])
            #expect(await store.serverAPICalls["history", default: 0] - start - first - second == 11)
        }
    }

    @Test(
        "end to end, all three channels: payments whose notifications were lost and that the app never reported are credited once after each channel's statement run, and the reports name them",
        arguments: TestEngine.available)
    func allChannels(engine: TestEngine) async throws {
        let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
        try await TestServer.withComponents(engine: engine) { client, components, clock in
            let store = try #require(components.sandbox).appStore
            // Per channel: one payment the server heard of (the worker's query, the app's submission), two it never
            // did (no notification reaches it here; the app was killed after the user paid).
            var lost: [OrderSafeModel.Channel: [String]] = [:]
            var heard: [String] = []
            for channel in [OrderSafeModel.Channel.wechatPay, .alipay] {
                for index in 0..<3 {
                    let created = try await ReconciliationFlowTests.order(client, alice, channel: channel.rawValue)
                    try await ReconciliationFlowTests.pay(client, created)
                    if index == 0 {
                        _ = try await components.reconciler.settle(orderNo: created.order.orderNo)
                        heard.append(created.order.orderNo)
                    } else {
                        lost[channel, default: []].append(created.order.orderNo)
                    }
                }
            }
            for index in 0..<3 {
                let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
                let (_, jws) = try await store.purchase(
                    productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
                if index == 0 {
                    #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: jws).verdict == .recorded)
                    heard.append(order.orderNo)
                } else {
                    lost[.appStore, default: []].append(order.orderNo)
                }
            }
            for orderNo in heard {
                #expect(try await ReconciliationFlowTests.status(client, alice, orderNo) == .fulfilled)
            }
            for orderNo in lost.values.joined() {
                #expect(try await ReconciliationFlowTests.status(client, alice, orderNo) == .created)
            }

            // Noon the next day in Beijing: all have published (WeChat Pay from 10:00, Alipay by 09:00, the App
            // Store's UTC day an hour after it ends, 09:00 Beijing).
            let paidAt = clock.now()
            Self.nextMorning(clock, hour: 12)
            #expect(Set(components.statements.channels) == [.wechatPay, .alipay, .appStore])
            for channel in components.statements.channels {
                let day = try #require(components.statements.day(of: channel, containing: paidAt))
                let report = try await components.statements.reconcile(channel, day: day)
                #expect(report.status == .balanced, "\(channel): \(report.discrepancies)")
                #expect(report.matched.count == 1 && report.recovered.count == 2, "\(channel)")
                var recovered: [String] = []
                for id in report.recoveredTransactions {
                    let payment = try await components.ledger.payment(channel: channel, providerTransactionID: id)
                    recovered.append(try #require(payment).orderNo)
                }
                #expect(recovered.sorted() == lost[channel]?.sorted(), "\(channel)")
            }
            for orderNo in heard + lost.values.joined() {
                #expect(try await ReconciliationFlowTests.status(client, alice, orderNo) == .fulfilled)
            }
            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
            let balances = try holdings.decoded(HoldingsResponse.self).balances
            #expect(Set(balances) == [Balance(name: "gift_boxes", amount: 6), Balance(name: "coins", amount: 180)])
        }
    }

    @Test(
        "the statement is the trigger, the query the authority: a payment the provider's queries do not show yet stays flagged until they do"
    )
    func queryIsTheAuthority() async throws {
        let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
        try await TestServer.withComponents { client, components, clock in
            let day = StatementDay(containing: clock.now(), utcOffset: Self.beijing)
            let lag = try await client.execute(
                uri: "/sandbox/wechatpay/faults", method: .post,
                body: ByteBuffer(string: #"{"query_lag_seconds": 172800}"#))
            #expect(lag.status == .ok)
            let refused = try await client.execute(
                uri: "/sandbox/wechatpay/faults", method: .post, body: ByteBuffer(string: #"{"query_lag_seconds": -1}"#)
            )
            #expect(refused.status == .badRequest)
            let created = try await ReconciliationFlowTests.order(client, alice, channel: "wechatpay")
            try await ReconciliationFlowTests.pay(client, created)
            // The worker asks a minute on: WeChat Pay still says the buyer is paying.
            clock.advance(by: 61)
            _ = try await components.runner.runDue()
            #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) == .created)
            Self.nextMorning(clock)
            let first = try await components.statements.reconcile(.wechatPay, day: day)
            #expect(first.recovered.count == 0 && first.flagged.count == 1)
            #expect(
                first.discrepancies.first?.kind == .notInLedger
                    && first.discrepancies.first?.detail.contains("pending") == true)
            #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) == .created)
            // Two days on the query shows the payment: the day's next run recovers it, once.
            clock.advance(by: 2 * 86400)
            let second = try await components.statements.reconcile(.wechatPay, day: day)
            #expect(second.status == .balanced && second.recovered.count == 1)
            #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) == .fulfilled)
        }
    }

    @Test("a tester can have today's bill published at once: a run on real time ends with the books")
    func billsAtOnce() async throws {
        let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
        try await TestServer.withComponents { client, components, clock in
            let today = StatementDay(containing: clock.now(), utcOffset: Self.beijing)
            let created = try await ReconciliationFlowTests.order(client, alice, channel: "wechatpay")
            try await ReconciliationFlowTests.pay(client, created)
            #expect(try await components.statements.reconcile(.wechatPay, day: today).status == .waiting)
            let published = try await client.execute(
                uri: "/sandbox/wechatpay/faults", method: .post, body: ByteBuffer(string: #"{"bills_now": true}"#))
            #expect(published.status == .ok)
            let report = try await components.statements.reconcile(.wechatPay, day: today)
            #expect(report.status == .balanced && report.recovered.count == 1)
            #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) == .fulfilled)
        }
    }

    @Test("a payment the ledger holds that the statement lacks is flagged unless WeChat Pay dates it on another day")
    func ledgerOnlyPayment() async throws {
        let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
        try await TestServer.withComponents { client, components, clock in
            // Paid at 23:59 Beijing and recorded (by a query) just after midnight: on the first day's statement.
            let seconds = (Int(clock.now().timeIntervalSince1970) + Self.beijing) % 86400
            clock.advance(by: TimeInterval(86400 - seconds - 60))
            let paidDay = StatementDay(containing: clock.now(), utcOffset: Self.beijing)
            let created = try await ReconciliationFlowTests.order(client, alice, channel: "wechatpay")
            try await ReconciliationFlowTests.pay(client, created)
            clock.advance(by: 120)
            let recordedDay = StatementDay(containing: clock.now(), utcOffset: Self.beijing)
            #expect(recordedDay == paidDay.next)
            _ = try await components.reconciler.settle(orderNo: created.order.orderNo)
            #expect(try await ReconciliationFlowTests.status(client, alice, created.order.orderNo) == .fulfilled)
            Self.nextMorning(clock)
            let first = try await components.statements.reconcile(.wechatPay, day: paidDay)
            #expect(first.status == .balanced && first.matched.count == 1 && first.otherDay == 0)
            let second = try await components.statements.reconcile(.wechatPay, day: recordedDay)
            #expect(second.status == .balanced && second.otherDay == 1 && second.matched.count == 0)
        }
    }

    @Test("the daily job checks yesterday from the configured hour, and waits while the bill is being written")
    func dailyJob() async throws {
        try await TestServer.withComponents(extra: ["ORDERSAFE_RECONCILE_STATEMENT_HOUR": "11"]) {
            _, components, clock in
            let today = StatementDay(containing: clock.now(), utcOffset: Self.beijing)
            Self.nextMorning(clock, hour: 9)
            _ = try await components.runner.runDue()
            #expect(try await components.statements.report(.wechatPay, day: today) == nil)
            clock.advance(by: 2 * 3600)
            _ = try await components.runner.runDue()
            let report = try #require(try await components.statements.report(.wechatPay, day: today))
            #expect(report.status == .balanced && report.statementTotals?.rows == 0)
            // Each channel's job runs (they share a kind): Alipay's day without a bill waits until noon.
            #expect(try await components.statements.report(.alipay, day: today)?.status == .waiting)
            clock.advance(by: 3600)
            _ = try await components.runner.runDue()
            #expect(try await components.statements.report(.alipay, day: today)?.status == .balanced)
        }
    }

    @Test("the CSV quotes what needs quoting and never hands Excel a formula")
    func csvCells() {
        #expect(
            StatementCSV.line(["plain", "a,b", #"say "hi""#, "=HYPERLINK(1)", "+1", "@x", "line\nbreak"])
                == #"plain,"a,b","say ""hi""",'=HYPERLINK(1),'+1,'@x,"line"# + "\nbreak\"\r\n")
        // Fullwidth signs, an invisible character first, a semicolon separator's next cell.
        #expect(
            StatementCSV.line(["＝1+2", "\u{200B}=1+2", "\u{FEFF}\u{200D}＋1", "a;=1+2", "a; -1", "1-2", "a=b"])
                == "'＝1+2,\u{200B}'=1+2,\u{FEFF}\u{200D}'＋1,\"a;'=1+2\",\"a; '-1\",1-2,a=b\r\n")
    }
}
