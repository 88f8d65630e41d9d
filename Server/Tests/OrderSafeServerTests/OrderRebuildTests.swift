import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OrderSafeModel
import Synchronization
import Testing

@testable import Engine
@testable import OrderSafeServer

/// A database restored from a backup older than some payments: the orders of those payments are gone from the
/// ledger, and the providers' records alone must rebuild them — to their buyers, once (#50 item 3).
@Suite("Orders the ledger lost, rebuilt from the provider's record alone")
struct OrderRebuildTests {
    /// One paid order, its buyer and the buyer's token.
    struct Paid: Sendable {
        var order: Order
        var token: String
    }

    /// Before the loss: `buyers` each order and pay one gift box through `channels` on a server whose ledger is then
    /// lost (the backup predates them); no notification reaches it. The providers keep their records in `folder`.
    static func payThenLose(folder: String, channels: [String]) async throws -> [Paid] {
        let buyers = [
            try await TestServer.token("alice", lifetime: 30 * 86400),
            try await TestServer.token("bob", lifetime: 30 * 86400),
        ]
        let paid = Shared<[Paid]>([])
        try await TestServer.withComponents(extra: ["ORDERSAFE_SERVER_DATA_DIR": folder]) { client, components, _ in
            let sandbox = try #require(components.sandbox)
            await sandbox.alipay.setNotificationSink { _, _ in false }  // the merchant's server is down
            await sandbox.wechatpay.setNotificationSink { _, _, _ in false }
            for channel in channels {
                for token in buyers {
                    let created = try await ReconciliationFlowTests.order(client, token, channel: channel)
                    try await ReconciliationFlowTests.pay(client, created)
                    paid.value.withLock { $0.append(Paid(order: created.order, token: token)) }
                }
            }
        }
        return paid.value.withLock { $0 }
    }

    /// Keeps what the sandboxes send in `sent` (acknowledged, as a merchant's server that took them would).
    static func keep(_ sandbox: SandboxProviders, in sent: Shared<[Sent]>) async {
        await sandbox.alipay.setNotificationSink { _, body in
            sent.value.withLock { $0.append(Sent(channel: .alipay, headers: [:], body: Array(body.utf8))) }
            return true
        }
        await sandbox.wechatpay.setNotificationSink { _, headers, body in
            sent.value.withLock { $0.append(Sent(channel: .wechatPay, headers: headers, body: body)) }
            return true
        }
    }

    struct Sent: Sendable {
        var channel: OrderSafeModel.Channel
        var headers: [String: String]
        var body: [UInt8]
    }

    /// Posts a notification as its provider does; true when the server acknowledged it.
    static func post(_ client: some TestClientProtocol, _ sent: Sent) async -> Bool {
        var fields: HTTPFields = [
            .contentType: sent.channel == .alipay ? "application/x-www-form-urlencoded" : "application/json"
        ]
        for (name, value) in sent.headers { if let field = HTTPField.Name(name) { fields[field] = value } }
        let response = try? await client.execute(
            uri: "/v1/notify/\(sent.channel.rawValue)", method: .post, headers: fields,
            body: ByteBuffer(bytes: sent.body))
        return sent.channel == .alipay
            ? response.map { String(buffer: $0.body) == "success" } ?? false : response?.status == .noContent
    }

    /// Every order is its buyer's, fulfilled once; each buyer holds one gift box per order paid; another user sees none.
    static func expectRebuilt(_ paid: [Paid], _ client: some TestClientProtocol) async throws {
        for payment in paid {
            let read = try await client.execute(
                uri: "/v1/orders/\(payment.order.orderNo)", method: .get, headers: TestServer.bearer(payment.token))
            #expect(read.status == .ok, "\(payment.order.orderNo): \(String(buffer: read.body))")
            guard read.status == .ok else { continue }
            let order = try read.decoded(OrderResponse.self).order
            #expect(order.status == .fulfilled && order.amount == payment.order.amount)
            #expect(order.productID == payment.order.productID && order.channel == payment.order.channel)
            let other = try #require(paid.first { $0.token != payment.token }).token
            let stranger = try await client.execute(
                uri: "/v1/orders/\(payment.order.orderNo)", method: .get, headers: TestServer.bearer(other))
            #expect(stranger.status == .notFound, "another buyer's order is never shown")
        }
        for token in Set(paid.map(\.token)) {
            let holdings = try await client.execute(
                uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(token))
            let count = Int64(paid.filter { $0.token == token }.count)
            #expect(
                try holdings.decoded(HoldingsResponse.self).balances == [Balance(name: "gift_boxes", amount: count)])
        }
    }

    /// A value the test's closures share.
    final class Shared<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ initial: Value) { value = Mutex(initial) }
    }

    static func folder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ordersafe-rebuild-\(UUID().uuidString)").path
    }

    @Test(
        "WeChat Pay and Alipay: the notifications the providers send again after a restore rebuild each order for its buyer, once however often they come"
    )
    func fromNotifications() async throws {
        let folder = Self.folder()
        let paid = try await Self.payThenLose(folder: folder, channels: ["wechatpay", "alipay"])
        let sent = Shared<[Sent]>([])
        try await TestServer.withComponents(
            extra: ["ORDERSAFE_SERVER_DATA_DIR": folder], beforeStart: { await Self.keep($0, in: sent) }
        ) { client, components, _ in
            let sandbox = try #require(components.sandbox)
            await sandbox.wechatpay.settle()
            await sandbox.alipay.settle()
            #expect(
                sent.value.withLock { $0.count } == paid.count, "each provider sent again what was never acknowledged")
            // Delivered, then delivered again (a provider retrying): acknowledged each time, nothing credited twice.
            for _ in 0..<2 {
                for notification in sent.value.withLock({ $0 }) {
                    #expect(await Self.post(client, notification))
                }
                try await Self.expectRebuilt(paid, client)
            }
        }
    }

    @Test(
        "WeChat Pay's and Alipay's statements alone rebuild the orders their bills list and the ledger lost (the query's attach, passback_params), once however often they are read"
    )
    func fromTheStatement() async throws {
        let folder = Self.folder()
        let paid = try await Self.payThenLose(folder: folder, channels: ["wechatpay", "alipay"])
        try await TestServer.withComponents(extra: ["ORDERSAFE_SERVER_DATA_DIR": folder]) { client, components, clock in
            let day = StatementDay(containing: clock.now(), utcOffset: StatementReconciliationTests.beijing)
            StatementReconciliationTests.nextMorning(clock)
            for channel in [OrderSafeModel.Channel.wechatPay, .alipay] {
                let report = try await components.statements.reconcile(channel, day: day)
                #expect(report.recovered.count == 2 && report.flagged.count == 0, "\(report.discrepancies)")
                let again = try await components.statements.reconcile(channel, day: day)
                #expect(again.recovered == report.recovered && again.flagged.count == 0)
            }
            try await Self.expectRebuilt(paid, client)
        }
    }

    @Test(
        "WeChat Pay and Alipay: the app that paid reports the order the ledger lost, naming the channel, and it is rebuilt for its buyer from the provider's query; another user, a number not ours, or no channel are answered 404"
    )
    func fromThePhone() async throws {
        let folder = Self.folder()
        let paid = try await Self.payThenLose(folder: folder, channels: ["wechatpay", "alipay"])
        try await TestServer.withComponents(extra: ["ORDERSAFE_SERVER_DATA_DIR": folder]) { client, components, clock in
            func report(_ orderNo: String, _ token: String, channel: String?) async throws -> TestResponse {
                clock.advance(by: 2)  // one lookup of a lost order per user a second
                let named = channel.map { #","channel":"\#($0)""# } ?? ""
                return try await client.execute(
                    uri: "/v1/orders/\(orderNo)/client-result", method: .post, headers: TestServer.bearer(token),
                    body: ByteBuffer(string: #"{"result":"success"\#(named)}"#))
            }
            for payment in paid {
                let stranger = try #require(paid.first { $0.token != payment.token }).token
                let channel = payment.order.channel.rawValue
                #expect(try await report(payment.order.orderNo, payment.token, channel: nil).status == .notFound)
                #expect(try await report(payment.order.orderNo, stranger, channel: channel).status == .notFound)
                let rebuilt = try await components.ledger.order(number: payment.order.orderNo)
                #expect(rebuilt == nil || rebuilt?.userID == payment.order.userID, "if anyone's, the buyer's")
            }
            #expect(try await report("not-an-order-number", paid[0].token, channel: "wechatpay").status == .notFound)
            // One provider lookup of a lost order per user a second: the next within it waits (503, the app asks
            // again), whatever the number.
            #expect(try await report("OS20261129-0000000000", paid[0].token, channel: "wechatpay").status == .notFound)
            let tooSoon = try await client.execute(
                uri: "/v1/orders/OS20261129-0000000001/client-result", method: .post,
                headers: TestServer.bearer(paid[0].token),
                body: ByteBuffer(string: #"{"result":"pending","channel":"alipay"}"#))
            #expect(
                tooSoon.status == .serviceUnavailable && String(buffer: tooSoon.body).contains("provider_unavailable"))
            for payment in paid {
                let answer = try await report(
                    payment.order.orderNo, payment.token, channel: payment.order.channel.rawValue)
                #expect(answer.status == .ok, "\(String(buffer: answer.body))")
                #expect(try answer.decoded(OrderResponse.self).order.status == .fulfilled)
            }
            try await Self.expectRebuilt(paid, client)
        }
    }
}

extension OrderRebuildTests {
    @Test(
        "App Store: a transaction whose order the restored ledger lacks goes to the buyer its token names when they submit it; another user on the phone is refused and credited nothing"
    )
    func appStoreTokenNamesItsBuyer() async throws {
        let folder = Self.folder()
        let alice = try await TestServer.token("alice", lifetime: 30 * 86400)
        let bob = try await TestServer.token("bob", lifetime: 30 * 86400)
        let bought = Shared("")  // what the phone holds after the purchase the restore lost
        try await TestServer.withComponents(extra: ["ORDERSAFE_SERVER_DATA_DIR": folder]) { client, components, _ in
            let order = try await TestServer.createOrder(client, token: alice).decoded(OrderResponse.self).order
            #expect(AccountTokenTag.isTagged(order.orderUUID), "the sandbox makes a recovery key: tokens are tagged")
            let store = try #require(components.sandbox).appStore
            let (_, jws) = try await store.purchase(
                productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
            bought.value.withLock { $0 = jws }
        }
        let jws = bought.value.withLock { $0 }
        try await TestServer.withComponents(extra: ["ORDERSAFE_SERVER_DATA_DIR": folder]) { client, _, _ in
            // Bob signed in on the phone: the transaction is not his, whatever the ledger forgot.
            let refused = try await AppStoreFlowTests.submit(client, token: bob, #"{"signed_transaction":"\#(jws)"}"#)
            #expect(refused.status == .conflict, "\(String(buffer: refused.body))")
            #expect(String(buffer: refused.body).contains("bought for another user"))
            #expect(try await AppStoreFlowTests.balance(client, token: bob) == 0)
            // Alice signs in: hers, recorded once, however often it comes.
            for _ in 0..<2 {
                let result = try await AppStoreFlowTests.submit(client, token: alice, jws: jws)
                #expect(result.verdict == .recorded && result.order?.status == .fulfilled)
            }
            #expect(try await AppStoreFlowTests.balance(client, token: alice) == 60)
            #expect(try await AppStoreFlowTests.balance(client, token: bob) == 0)
        }
    }
}
