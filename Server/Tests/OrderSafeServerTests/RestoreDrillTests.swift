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

/// #50 item 5: a ledger lost after a backup, restored, and recovered from the providers and the phones — judged
/// against the sandboxes' own records — on SQLite (`ordersafe backup`), and on PostgreSQL with a base backup and the
/// archived write-ahead log (point-in-time recovery) or the base backup alone.
@Suite("The restore drill: back up mid-run, lose the ledger, restore, recover from the providers")
struct RestoreDrillTests {
    /// Who bought what: each order number and App Store transaction, with its buyer; the phones' signed
    /// transactions, and the provider orders a phone still holds in its journal (it was killed before it heard the
    /// server's answer).
    final class Purchases: Sendable {
        let buyerOf = Mutex<[String: String]>([:])
        let phones = Mutex<[(user: String, jws: String)]>([])
        let journals = Mutex<[(user: String, orderNo: String, channel: OrderSafeModel.Channel)]>([])
    }

    static let buyers = ["alice", "bob"]
    /// The buyer whose phone still holds its provider orders; the other's are recovered from the statements.
    static let killedPhone = "alice"

    /// Each buyer pays once through each channel; notifications reach the server, the App Store's purchases are
    /// submitted by the phone.
    static func buyRound(
        _ client: some TestClientProtocol, _ components: OrderSafeComponents, tokens: [String: String],
        into purchases: Purchases
    ) async throws {
        let sandbox = try #require(components.sandbox)
        for user in buyers {
            let token = try #require(tokens[user])
            for channel in [Channel.wechatPay, .alipay] {
                let created = try await ReconciliationFlowTests.order(client, token, channel: channel.rawValue)
                try await ReconciliationFlowTests.pay(client, created)
                purchases.buyerOf.withLock { $0[created.order.orderNo] = user }
                if user == killedPhone {
                    purchases.journals.withLock { $0.append((user, created.order.orderNo, channel)) }
                }
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

    /// Where the drill's ledger lives, and how it is backed up, lost and restored.
    struct Disaster: Sendable {
        var name: String
        /// `database.url` before the loss.
        var live: String
        var backUp: @Sendable (OrderSafeComponents, Date) async throws -> Void
        /// Destroys the live ledger and gives `database.url` of the restored one.
        var loseAndRestore: @Sendable () async throws -> String
    }

    @Test(
        "SQLite (`ordersafe backup`): every payment since the backup is recorded to its buyer once — WeChat Pay and Alipay from the statements and the phone that still held them, the App Store from the phones"
    )
    func sqlite() async throws {
        let folder = OrderRebuildTests.folder()
        let ledger = folder + "/ledger/ordersafe.sqlite"
        let backup = URL(fileURLWithPath: folder + "/backups/drill.sqlite")
        let restored = folder + "/restored/ordersafe.sqlite"
        try FileManager.default.createDirectory(atPath: folder + "/ledger", withIntermediateDirectories: true)
        let counts = try await Self.drill(
            in: folder,
            Disaster(
                name: "sqlite", live: "sqlite:\(ledger)",
                backUp: { components, now in
                    _ = try await LedgerBackup.write(components.database, to: backup, now: now, logger: TestLog.logger)
                },
                loseAndRestore: {
                    // The disk dies: the ledger and its log are gone; the backup is restored elsewhere.
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: ledger + suffix) }
                    _ = try await LedgerBackup.restore(backup, into: restored, logger: TestLog.logger)
                    return "sqlite:\(restored)"
                }))
        #expect(counts.lost == counts.sinceBackup && counts.recovered == counts.lost, "everything since the backup")
    }

    @Test(
        "PostgreSQL, base backup and archived WAL: restored to the moment of the loss, nothing left to recover",
        .enabled(if: DrillPostgresCluster.binFolder != nil)
    )
    func postgresPointInTime() async throws {
        let counts = try await Self.postgres(replayingArchive: true)
        #expect(counts.lost == 0 && counts.recovered == 0, "the archive held every acknowledged write")
    }

    @Test(
        "PostgreSQL, base backup only: everything since it recovered from the providers and the phones",
        .enabled(if: DrillPostgresCluster.binFolder != nil)
    )
    func postgresBaseOnly() async throws {
        let counts = try await Self.postgres(replayingArchive: false)
        #expect(counts.lost == counts.sinceBackup && counts.recovered == counts.lost, "everything since the backup")
    }

    static func postgres(replayingArchive: Bool) async throws -> Counts {
        let folder = OrderRebuildTests.folder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let cluster = try DrillPostgresCluster.start(in: folder + "/pg")
        defer { cluster.remove() }
        return try await drill(
            in: folder,
            Disaster(
                name: replayingArchive ? "postgresql, base backup + WAL" : "postgresql, base backup only",
                live: cluster.url,
                backUp: { _, _ in try cluster.baseBackup() },
                loseAndRestore: {
                    if replayingArchive { try await cluster.awaitArchived() }
                    try cluster.lose()
                    try await cluster.restore(replayingArchive: replayingArchive)
                    return cluster.url
                }))
    }

    /// What a drill found, as its line prints it.
    struct Counts: Sendable {
        var sinceBackup = 0
        var lost = 0
        var recovered = 0
    }

    /// Buys, backs up, buys again, loses and restores the ledger, recovers — the phones first (what they still hold),
    /// then the statements of the day — and judges the ledger against the sandboxes' records.
    static func drill(in folder: String, _ disaster: Disaster) async throws -> Counts {
        var tokens: [String: String] = [:]
        for user in buyers { tokens[user] = try await TestServer.token(user, lifetime: 30 * 86400) }
        let purchases = Purchases()
        let backedUp = Mutex(0)
        try await TestServer.withComponents(
            extra: ["ORDERSAFE_SERVER_DATA_DIR": folder, "ORDERSAFE_DATABASE_URL": disaster.live]
        ) { [tokens] client, components, clock in
            await route(try #require(components.sandbox), to: client)
            try await buyRound(client, components, tokens: tokens, into: purchases)
            try await disaster.backUp(components, clock.now())
            backedUp.withLock { $0 = purchases.buyerOf.withLock { $0.count } }
            try await buyRound(client, components, tokens: tokens, into: purchases)
        }
        let restored = try await disaster.loseAndRestore()

        let counts = Mutex(Counts())
        try await TestServer.withComponents(
            extra: ["ORDERSAFE_SERVER_DATA_DIR": folder, "ORDERSAFE_DATABASE_URL": restored]
        ) { [tokens] client, components, clock in
            let sandbox = try #require(components.sandbox)
            let buyerOf = purchases.buyerOf.withLock { $0 }
            let records =
                await sandbox.wechatpay.payments.map { (Channel.wechatPay, $0) }
                + (await sandbox.alipay.payments).map { (Channel.alipay, $0) }
                + (try await sandbox.appStore.payments).map { (Channel.appStore, $0) }
            #expect(records.count == buyerOf.count, "every purchase the drill made, and nothing else")
            /// The providers' payments the ledger lacks.
            func missing() async throws -> Int {
                var missing = 0
                for (channel, record) in records {
                    let payment = try await components.ledger.payment(
                        channel: channel, providerTransactionID: record.providerTransactionID)
                    if payment == nil { missing += 1 }
                }
                return missing
            }
            let lost = try await missing()

            // The phones: the one killed before it heard the server asks about its provider orders again (naming
            // the channel); every phone submits the App Store transactions it holds.
            for entry in purchases.journals.withLock({ $0 }) {
                clock.advance(by: 2)
                let response = try await client.execute(
                    uri: "/v1/orders/\(entry.orderNo)/client-result", method: .post,
                    headers: TestServer.bearer(try #require(tokens[entry.user])),
                    body: ByteBuffer(string: #"{"result":"pending","channel":"\#(entry.channel.rawValue)"}"#))
                #expect(response.status == .ok, "\(entry.orderNo): \(String(buffer: response.body))")
                let order = try response.decoded(OrderResponse.self).order
                #expect(order.status == .fulfilled, "the phone is told what the provider said: paid")
            }
            for phone in purchases.phones.withLock({ $0 }) {
                let result = try await AppStoreFlowTests.submit(
                    client, token: try #require(tokens[phone.user]), jws: phone.jws)
                #expect(result.verdict == .recorded)
            }
            let afterPhones = try await missing()

            // The statements of the day, the next morning.
            let day = StatementDay(containing: clock.now(), utcOffset: StatementReconciliationTests.beijing)
            StatementReconciliationTests.nextMorning(clock)
            var flagged = 0
            for channel in [Channel.wechatPay, .alipay] {
                let report = try await components.statements.reconcile(channel, day: day)
                flagged += report.flagged.count
                #expect(report.discrepancies.isEmpty, "\(report.discrepancies)")
            }
            let afterStatements = try await missing()

            // Judged against the providers' own records.
            var (wrongUser, unaccounted) = (0, 0)
            var recordedUnits: [String: (boxes: Int64, coins: Int64)] = [:]
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
                else { continue }
                if order.userID != buyer { wrongUser += 1 }
                let units = channel == .appStore ? (Int64(0), Int64(60)) : (Int64(1), Int64(0))
                recordedUnits[buyer, default: (0, 0)].boxes += units.0
                recordedUnits[buyer, default: (0, 0)].coins += units.1
            }
            // Nothing twice: each buyer holds exactly what the ledger recorded for them.
            var double = 0
            for user in buyers {
                let holdings = try await client.execute(
                    uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(try #require(tokens[user])))
                let balances = try holdings.decoded(HoldingsResponse.self).balances
                let boxes = balances.first { $0.name == "gift_boxes" }?.amount ?? 0
                let coins = balances.first { $0.name == "coins" }?.amount ?? 0
                let recorded = recordedUnits[user, default: (0, 0)]
                if boxes > recorded.boxes || coins > recorded.coins { double += 1 }
                #expect(boxes == recorded.boxes && coins == recorded.coins, "\(user): what the ledger recorded, once")
            }
            let before = backedUp.withLock { $0 }
            print(
                "restore drill (\(disaster.name)): backed up at \(before), lost \(lost) since, recovered \(lost - afterStatements) (phones \(lost - afterPhones), statements \(afterPhones - afterStatements)), flagged \(flagged), missing \(afterStatements), double \(double), wrong-user \(wrongUser)"
            )
            #expect(wrongUser == 0 && double == 0 && unaccounted == 0 && flagged == 0 && afterStatements == 0)
            counts.withLock {
                $0 = Counts(sinceBackup: buyerOf.count - before, lost: lost, recovered: lost - afterStatements)
            }
        }
        return counts.withLock { $0 }
    }
}
