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

@testable import Engine
@testable import OrderSafeServer

/// #50 item 5 on SQLite: a ledger lost after a backup, restored, and recovered from the providers and the phones —
/// judged against the sandboxes' own records.
@Suite("The restore drill: back up mid-run, lose the ledger, restore, recover from the providers")
struct RestoreDrillTests {
    /// Who bought what: each order number and App Store transaction, with its buyer; the phones' signed transactions.
    final class Purchases: Sendable {
        let buyerOf = Mutex<[String: String]>([:])
        let phones = Mutex<[(user: String, jws: String)]>([])
    }

    static let buyers = ["alice", "bob"]

    /// Each buyer pays once through each channel; notifications reach the server, the App Store's purchases are
    /// submitted by the phone.
    static func buyRound(
        _ client: some TestClientProtocol, _ components: OrderSafeComponents, tokens: [String: String],
        into purchases: Purchases
    ) async throws {
        let sandbox = try #require(components.sandbox)
        for user in buyers {
            let token = try #require(tokens[user])
            for channel in ["wechatpay", "alipay"] {
                let created = try await ReconciliationFlowTests.order(client, token, channel: channel)
                try await ReconciliationFlowTests.pay(client, created)
                purchases.buyerOf.withLock { $0[created.order.orderNo] = user }
            }
            let order = try await TestServer.createOrder(client, token: token).decoded(OrderResponse.self).order
            let (id, jws) = try await sandbox.appStore.purchase(
                productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
            #expect(try await AppStoreFlowTests.submit(client, token: token, jws: jws).verdict == .recorded)
            purchases.buyerOf.withLock { $0[id] = user }
            purchases.phones.withLock { $0.append((user, jws)) }
        }
        await sandbox.wechatpay.settle()
        await sandbox.alipay.settle()
    }

    /// Notifications delivered in process and acknowledged, as a live server would.
    static func route(_ sandbox: SandboxProviders, to client: some TestClientProtocol) async {
        await sandbox.alipay.setNotificationSink { _, body in
            await OrderRebuildTests.post(client, .init(channel: .alipay, headers: [:], body: Array(body.utf8)))
        }
        await sandbox.wechatpay.setNotificationSink { _, headers, body in
            await OrderRebuildTests.post(client, .init(channel: .wechatPay, headers: headers, body: body))
        }
    }

    @Test(
        "SQLite: every payment since the backup is recorded to its buyer once — WeChat Pay from its statement, the App Store from the phones; Alipay's, whose notifications were acknowledged before the loss, flagged"
    )
    func sqlite() async throws {
        let folder = OrderRebuildTests.folder()
        let ledger = folder + "/ledger/ordersafe.sqlite"
        let backup = URL(fileURLWithPath: folder + "/backups/drill.sqlite")
        let restored = folder + "/restored/ordersafe.sqlite"
        var tokens: [String: String] = [:]
        for user in Self.buyers { tokens[user] = try await TestServer.token(user, lifetime: 30 * 86400) }
        let purchases = Purchases()
        let backedUp = Mutex(0)
        try FileManager.default.createDirectory(
            atPath: folder + "/ledger", withIntermediateDirectories: true)
        try await TestServer.withComponents(
            extra: ["ORDERSAFE_SERVER_DATA_DIR": folder, "ORDERSAFE_DATABASE_URL": "sqlite:\(ledger)"]
        ) { [tokens] client, components, clock in
            await Self.route(try #require(components.sandbox), to: client)
            try await Self.buyRound(client, components, tokens: tokens, into: purchases)
            _ = try await LedgerBackup.write(components.database, to: backup, now: clock.now(), logger: TestLog.logger)
            backedUp.withLock { $0 = purchases.buyerOf.withLock { $0.count } }
            try await Self.buyRound(client, components, tokens: tokens, into: purchases)
        }
        // The disk dies: the ledger and its log are gone; the backup is restored elsewhere.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: ledger + suffix) }
        _ = try await LedgerBackup.restore(backup, into: restored, logger: TestLog.logger)

        try await TestServer.withComponents(
            extra: ["ORDERSAFE_SERVER_DATA_DIR": folder, "ORDERSAFE_DATABASE_URL": "sqlite:\(restored)"]
        ) { [tokens] client, components, clock in
            let sandbox = try #require(components.sandbox)
            let buyerOf = purchases.buyerOf.withLock { $0 }
            // Recovery: the day's statements since the backup, and the phones submitting what they still hold.
            let day = StatementDay(containing: clock.now(), utcOffset: StatementReconciliationTests.beijing)
            StatementReconciliationTests.nextMorning(clock)
            var flagged = 0
            var recovered = 0
            for channel in [Channel.wechatPay, .alipay] {
                let report = try await components.statements.reconcile(channel, day: day)
                recovered += report.recovered.count
                flagged += report.flagged.count
                for discrepancy in report.discrepancies {
                    #expect(
                        channel == .alipay && discrepancy.kind == .unknownOrder
                            && discrepancy.detail.contains("passback_params"), "\(discrepancy)")
                }
            }
            for phone in purchases.phones.withLock({ $0 }) {
                let result = try await AppStoreFlowTests.submit(
                    client, token: try #require(tokens[phone.user]), jws: phone.jws)
                #expect(result.verdict == .recorded)
            }

            // Judged against the providers' own records.
            var (lost, missing, wrongUser, unaccounted) = (0, 0, 0, 0)
            var recordedUnits: [String: (boxes: Int64, coins: Int64)] = [:]
            let records =
                await sandbox.wechatpay.payments.map { (Channel.wechatPay, $0) }
                + (await sandbox.alipay.payments).map { (Channel.alipay, $0) }
                + (try await sandbox.appStore.payments).map { (Channel.appStore, $0) }
            #expect(records.count == buyerOf.count, "every purchase the drill made, and nothing else")
            for (channel, record) in records {
                let key = channel == .appStore ? record.providerTransactionID : record.orderReference ?? ""
                guard let buyer = buyerOf[key] else {
                    unaccounted += 1
                    continue
                }
                guard
                    let payment = try await components.ledger.payment(
                        channel: channel, providerTransactionID: record.providerTransactionID),
                    let order = try await components.ledger.order(number: payment.orderNo)
                else {
                    missing += 1
                    continue
                }
                if order.userID != buyer { wrongUser += 1 }
                let units = channel == .appStore ? (Int64(0), Int64(60)) : (Int64(1), Int64(0))
                recordedUnits[buyer, default: (0, 0)].boxes += units.0
                recordedUnits[buyer, default: (0, 0)].coins += units.1
            }
            lost = buyerOf.count - backedUp.withLock { $0 }
            // Nothing twice: each buyer holds exactly what the ledger recorded for them.
            var double = 0
            for user in Self.buyers {
                let holdings = try await client.execute(
                    uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(try #require(tokens[user])))
                let balances = try holdings.decoded(HoldingsResponse.self).balances
                let boxes = balances.first { $0.name == "gift_boxes" }?.amount ?? 0
                let coins = balances.first { $0.name == "coins" }?.amount ?? 0
                let recorded = recordedUnits[user, default: (0, 0)]
                if boxes > recorded.boxes || coins > recorded.coins { double += 1 }
                #expect(boxes == recorded.boxes && coins == recorded.coins, "\(user): what the ledger recorded, once")
            }
            print(
                "restore drill (sqlite): backed up at \(backedUp.withLock { $0 }), lost \(lost) since, recovered \(lost - missing) (statements \(recovered), phones \(Self.buyers.count)), flagged \(flagged), missing \(missing), double \(double), wrong-user \(wrongUser)"
            )
            #expect(wrongUser == 0 && double == 0 && unaccounted == 0)
            #expect(missing == flagged && flagged == Self.buyers.count, "only Alipay's lost payments wait, flagged")
            #expect(recovered == Self.buyers.count, "WeChat Pay's lost payments, from its statement")
        }
    }
}
