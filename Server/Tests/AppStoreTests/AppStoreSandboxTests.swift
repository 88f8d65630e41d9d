import ChannelSupport
import Crypto
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import Testing

@testable import AppStore
@testable import Sandbox

@Suite("App Store clients against the sandbox App Store")
struct AppStoreSandboxTests {
    static let merchantKey = P256.Signing.PrivateKey()
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let receiptSigner = try! SandboxReceiptSigner(now: now)

    static func world() async throws -> (SandboxAppStore, AppStoreServerAPIClient, SignedDataVerifier) {
        let authority = try SandboxAppStoreCA(now: now)
        let store = try SandboxAppStore(
            authority: authority, receipts: receiptSigner, bundleID: "com.example.app", appAppleID: 1234,
            merchantKeyID: "KEY1",
            merchantKey: merchantKey.publicKey, sharedSecret: "shared-secret", clock: FixedClock(date: now))
        let client = try await AppStoreServerAPIClient(
            signingKey: merchantKey.pemRepresentation, keyID: "KEY1", issuerID: "issuer", bundleID: "com.example.app",
            baseURL: "http://sandbox.local/sandbox/appstore", transport: store.transport,
            retry: RetryPolicy(attempts: 3, firstDelay: .milliseconds(1), timeout: .milliseconds(200)),
            clock: FixedClock(date: now),
            sleep: { _ in })
        let verifier = SignedDataVerifier(
            rootCertificates: try AppleRootCertificates.load([authority.rootDER], requireApple: false),
            bundleID: "com.example.app",
            appAppleID: 1234, environment: .sandbox)
        return (store, client, verifier)
    }

    /// Every notification of the store's history, page after page.
    static func notificationHistory(_ client: AppStoreServerAPIClient) async throws -> [String] {
        var notifications: [String] = []
        var token: String?
        repeat {
            let page = try await client.notificationHistory(
                startDate: 0, endDate: 9_999_999_999_999, paginationToken: token)
            notifications += page.signedPayloads
            token = page.hasMore ? page.paginationToken : nil
        } while token != nil
        return notifications
    }

    @Test(
        "the store and its devices' queues outlive the process on their folder, at the same instant; ids go on after the last"
    )
    func outlivesTheProcess() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "appstore-sandbox-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let authority = try SandboxAppStoreCA(now: Self.now)
        func start() async throws -> (SandboxAppStore, SandboxAppStoreDevices) {
            let store = try SandboxAppStore(
                authority: authority, receipts: Self.receiptSigner, bundleID: "com.example.app", appAppleID: 1234,
                merchantKeyID: "KEY1",
                merchantKey: Self.merchantKey.publicKey, clock: FixedClock(date: Self.now), folder: folder)
            let devices = try SandboxAppStoreDevices(store: store, folder: folder)
            try await devices.restore()
            await devices.setProducts([
                .init(
                    id: "coins", type: "Consumable", displayName: "Coins",
                    price: Money(amountMinor: 600, currency: .cny)),
                .init(
                    id: "vip", type: "Non-Consumable", displayName: "VIP",
                    price: Money(amountMinor: 2500, currency: .cny)),
            ])
            return (store, devices)
        }
        let (store, devices) = try await start()
        func buy(_ device: String, _ product: String, askToBuy: Bool = false) async throws
            -> SandboxAppStoreDevices.PurchaseResult
        {
            try await devices.purchase(
                device: device, productID: product, appAccountToken: UUID(), askToBuy: askToBuy, confirm: true)
        }
        guard case .success(let coins) = try await buy("phone-a", "coins"),
            case .success(let vip) = try await buy("phone-a", "vip"),
            case .pending(let request) = try await buy("phone-b", "coins", askToBuy: true)
        else {
            Issue.record("the purchases did not go through")
            return
        }
        let (coinsID, vipID) = (
            SandboxAppStoreDevices.transactionID(coins)!, SandboxAppStoreDevices.transactionID(vip)!
        )
        try await devices.finish(device: "phone-a", transactionID: vipID)
        try await devices.refund(transactionID: vipID)
        let before = try await store.payments.map(\.providerTransactionID).sorted()

        // The server is killed; a new one starts on the same folder at the same instant.
        let (again, restored) = try await start()
        #expect(try await again.payments.map(\.providerTransactionID).sorted() == before)
        #expect(await restored.purchasingDevices == [coinsID: "phone-a", vipID: "phone-a"])
        #expect(
            await restored.unfinished(device: "phone-a").compactMap(SandboxAppStoreDevices.transactionID) == [coinsID])
        #expect(await restored.askToBuyRequests(device: "phone-b").map(\.requestID) == [request])
        let updates = await restored.updates(device: "phone-a", after: 0).signed
        #expect(updates.count == 1 && SandboxAppStoreDevices.isRevoked(updates[0]))
        #expect(await restored.entitlements(device: "phone-a").isEmpty, "the refunded VIP is no longer held")
        guard let approved = try await restored.answerAskToBuy(device: "phone-b", requestID: request, approve: true)
        else {
            Issue.record("the request was not approved")
            return
        }
        #expect(![coinsID, vipID].contains(approved))
        #expect(Int64(approved)! > max(Int64(coinsID)!, Int64(vipID)!))
        let history = try await AppStoreServerAPIClient(
            signingKey: Self.merchantKey.pemRepresentation, keyID: "KEY1", issuerID: "issuer",
            bundleID: "com.example.app",
            baseURL: "http://sandbox.local/sandbox/appstore", transport: again.transport,
            retry: RetryPolicy(attempts: 1, firstDelay: .milliseconds(1), timeout: .milliseconds(200)),
            clock: FixedClock(date: Self.now),
            sleep: { _ in }
        ).notificationHistory(
            startDate: 0, endDate: Int64(Self.now.timeIntervalSince1970 * 1000) + 1, paginationToken: nil)
        #expect(history.signedPayloads.count == 2 && history.hasMore, "ONE_TIME_CHARGE ×3 and REFUND were kept")
    }

    @Test(
        "a purchase is signed as the App Store signs it; transaction info, history pages and notification history follow it"
    )
    func purchases() async throws {
        let (store, client, verifier) = try await Self.world()
        let token = UUID()
        let (id, signed) = try await store.purchase(
            productID: "com.example.vip.monthly", type: "Auto-Renewable Subscription", appAccountToken: token)
        let transaction = try await verifier.verifyTransaction(signed)
        #expect(
            transaction.transactionId == id && transaction.appAccountToken == token
                && transaction.environment == "Sandbox")
        #expect(
            try await verifier.verifyTransaction(try await client.transactionInfo(transactionID: id)).transactionId
                == id)
        for _ in 0..<2 {
            try await store.purchase(
                productID: "com.example.vip.monthly", type: "Auto-Renewable Subscription", originalTransactionID: id)
        }
        let history = try await client.fullTransactionHistory(transactionID: id)
        #expect(history.count == 3)
        for jws in history { #expect(try await verifier.verifyTransaction(jws).originalTransactionId == id) }
        try await store.refund(transactionID: id)
        var payloads: [String] = []
        var pagination: String?
        repeat {
            let page = try await client.notificationHistory(
                startDate: 0, endDate: Int64(Self.now.timeIntervalSince1970 * 1000) + 1, paginationToken: pagination)
            payloads += page.signedPayloads
            pagination = page.hasMore ? page.paginationToken : nil
        } while pagination != nil
        var types: [String] = []
        for payload in payloads { types.append(try await verifier.verifyNotification(payload).notificationType) }
        #expect(types == ["SUBSCRIBED", "DID_RENEW", "DID_RENEW", "REFUND"])
        let test = try await client.requestTestNotification()
        #expect(!test.isEmpty)
        await #expect(throws: AppStoreServerAPIError.self) { try await client.transactionInfo(transactionID: "404") }
    }

    @Test(
        "the history is the customer's (every chain their device bought), selected by purchase date; each transaction says its price"
    )
    func customerHistory() async throws {
        let (store, client, verifier) = try await Self.world()
        await store.setPrices(["com.example.coins": Money(amountMinor: 600, currency: .cny)])
        let (coins, signed) = try await store.purchase(productID: "com.example.coins", device: "phone-a")
        let (monthly, _) = try await store.purchase(
            productID: "com.example.vip.monthly", type: "Auto-Renewable Subscription", device: "phone-a")
        let (other, _) = try await store.purchase(productID: "com.example.coins", device: "phone-b")
        let (alone, _) = try await store.purchase(productID: "com.example.coins")
        let bought = Self.now.millisecondsSince1970
        func history(_ id: String, _ from: Int64, _ until: Int64) async throws -> Set<String> {
            var ids: Set<String> = []
            for jws in try await client.fullTransactionHistory(
                transactionID: id, query: [("startDate", String(from)), ("endDate", String(until))])
            {
                ids.insert(try await verifier.verifyTransaction(jws).transactionId ?? "")
            }
            return ids
        }
        #expect(try await history(monthly, bought, bought + 1) == [coins, monthly])
        #expect(try await history(other, bought, bought + 1) == [other])
        #expect(try await history(alone, bought, bought + 1) == [alone])
        #expect(try await history(coins, bought + 1, bought + 86_400_000).isEmpty)
        #expect(try await history(coins, bought - 86_400_000, bought).isEmpty)
        let transaction = try await verifier.verifyTransaction(signed)
        #expect(transaction.price == 6000 && transaction.currency == "CNY")
        let unpriced = try await verifier.verifyTransaction(try await client.transactionInfo(transactionID: monthly))
        #expect(unpriced.price == nil && unpriced.currency == nil)
    }

    @Test(
        "transactions minted in bulk verify as the sandbox's own, each with an id of its own, in order; a count out of range is refused"
    )
    func bulkMinting() async throws {
        let authority = try SandboxAppStoreCA(now: Self.now)
        let verifier = SignedDataVerifier(
            rootCertificates: try AppleRootCertificates.load([authority.rootDER], requireApple: false),
            bundleID: "com.example.app",
            appAppleID: 1234, environment: .sandbox)
        let minter = SandboxTransactionMinter(authority: authority, bundleID: "com.example.app")
        let signed = try await minter.mint(productID: "com.example.coins", count: 301, at: Self.now)
        #expect(signed.count == 301)
        var ids: [String] = []
        for jws in signed {
            let transaction = try await verifier.verifyTransaction(jws)
            #expect(
                transaction.productId == "com.example.coins" && transaction.type == .consumable
                    && transaction.environment == "Sandbox")
            ids.append(transaction.transactionId ?? "")
        }
        #expect(Set(ids).count == 301)
        #expect(ids == ids.sorted { Int64($0)! < Int64($1)! })
        await #expect(throws: SandboxAppStoreError.self) {
            try await minter.mint(productID: "p", count: SandboxTransactionMinter.maxCount + 1, at: Self.now)
        }
        let tokens = (0..<7).map { _ in UUID() }
        let bought = try await minter.mint(
            productID: "com.example.coins", count: 7, accountTokens: tokens, at: Self.now)
        var carried: [UUID?] = []
        for jws in bought { carried.append(try await verifier.verifyTransaction(jws).appAccountToken) }
        #expect(carried == tokens, "each transaction carries its own order's UUID, in order")
        await #expect(throws: SandboxAppStoreError.self) {
            try await minter.mint(productID: "p", count: 7, accountTokens: Array(tokens.prefix(6)), at: Self.now)
        }
    }

    @Test("an account-token file is read a UUID a line, in order, blanks and CRLF skipped; a bad line is named")
    func accountTokenFile() throws {
        let tokens = (0..<3).map { _ in UUID() }
        let text =
            "\(tokens[0].uuidString.lowercased())\r\n\n  \(tokens[1].uuidString)\t\n\r\n\(tokens[2].uuidString)"
        #expect(try SandboxTransactionMinter.accountTokens(in: text) == tokens)
        #expect(try SandboxTransactionMinter.accountTokens(in: "\n\n").isEmpty)
        for (text, line) in [
            ("\(tokens[0])\n\nnot-a-uuid\n", 3), ("\(tokens[0].uuidString.dropLast())\n", 1),
            ("\(tokens[0]) \(tokens[1])", 1),
        ] {
            #expect(throws: SandboxAppStoreError.badAccountToken(line: line)) {
                try SandboxTransactionMinter.accountTokens(in: text)
            }
        }
    }

    @Test("a negative or huge revision or pagination token is a 400, not a crash of the whole server")
    func hostilePositions() async throws {
        let (store, client, _) = try await Self.world()
        let (id, _) = try await store.purchase(
            productID: "com.example.vip.monthly", type: "Auto-Renewable Subscription")
        for revision in ["-1", "-9223372036854775808"] {
            do {
                _ = try await client.transactionHistory(transactionID: id, revision: revision)
                Issue.record("revision \(revision) was answered")
            } catch {
                guard case .api(let status, _, _) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(status == 400)
            }
        }
        #expect(
            try await client.transactionHistory(transactionID: id, revision: "9223372036854775807").signedTransactions
                .isEmpty)
        await #expect(throws: AppStoreServerAPIError.self) {
            try await client.notificationHistory(startDate: 0, endDate: 1, paginationToken: "-5")
        }
    }

    @Test("faults: 5xx and 429 with Retry-After are retried, a timeout is retried, an expired leaf is refused")
    func faults() async throws {
        let (store, client, verifier) = try await Self.world()
        let (id, _) = try await store.purchase(productID: "coins")
        await store.inject(.serverError)
        await store.inject(.rateLimited(retryAfterSeconds: 2))
        #expect(!(try await client.transactionInfo(transactionID: id)).isEmpty)
        await store.inject(.timeout(.seconds(2)))
        #expect(!(try await client.transactionInfo(transactionID: id)).isEmpty)
        await store.inject(.expiredLeaf)
        let (_, expired) = try await store.purchase(productID: "coins")
        do {
            _ = try await verifier.verifyTransaction(expired)
            Issue.record("a transaction signed by an expired leaf verified")
        } catch {
            #expect(error.name == "INVALID_CHAIN", "\(error)")
        }
        // A request signed with another key is not the merchant's.
        let stranger = try await AppStoreServerAPIClient(
            signingKey: P256.Signing.PrivateKey().pemRepresentation, keyID: "KEY1", issuerID: "issuer",
            bundleID: "com.example.app",
            baseURL: "http://sandbox.local", transport: store.transport, clock: FixedClock(date: Self.now))
        await #expect(throws: AppStoreServerAPIError.api(status: 401, code: nil, message: "HTTP 401")) {
            try await stranger.transactionInfo(transactionID: id)
        }
    }

    @Test(
        "StoreKit 1: the sandbox signs receipts our validator accepts; verifyReceipt goes production → 21007 → sandbox, 21005 is retried"
    )
    func receipts() async throws {
        let (store, _, _) = try await Self.world()
        let (first, _) = try await store.purchase(productID: "coins_60")
        let (second, _) = try await store.purchase(productID: "remove_ads", type: "Non-Consumable")
        let receipt = try await store.appReceipt()
        let roots = try AppleRootCertificates.load([Self.receiptSigner.rootDER], requireApple: false)
        guard
            case .valid(let decoded) = try await ReceiptValidator(rootCertificates: roots).validate(
                try ReceiptParser.bytes(Array(receipt.utf8)))
        else {
            Issue.record("a sandbox-signed receipt must validate against the sandbox receipt root")
            return
        }
        #expect(decoded.bundleID == "com.example.app" && decoded.inApp.map(\.transactionID) == [first, second])
        #expect(decoded.receiptCreationDateMS == Int64(Self.now.timeIntervalSince1970) * 1000)

        let client = VerifyReceiptClient(
            sharedSecret: "shared-secret", productionURL: "http://sandbox.local/appstore/production/verifyReceipt",
            sandboxURL: "http://sandbox.local/appstore/sandbox/verifyReceipt", transport: store.transport,
            retry: RetryPolicy(attempts: 3, firstDelay: .milliseconds(1), timeout: .seconds(2)), sleep: { _ in })
        await store.inject(.receiptServerUnavailable)
        let response = try await client.verify(receiptData: receipt)
        #expect(
            response.status == 0 && response.environment == "Sandbox"
                && response.inApp.map(\.transactionID) == [first, second])
        let wrongSecret = VerifyReceiptClient(
            sharedSecret: "nope", productionURL: "http://sandbox.local/appstore/production/verifyReceipt",
            sandboxURL: "http://sandbox.local/appstore/sandbox/verifyReceipt", transport: store.transport)
        await #expect(throws: VerifyReceiptError.status(VerifyReceiptStatus(21004))) {
            try await wrongSecret.verify(receiptData: receipt)
        }
        await #expect(throws: VerifyReceiptError.status(VerifyReceiptStatus(21002))) {
            try await client.verify(receiptData: "not base64!")
        }
    }

    @Test(
        "the store's record is its journal: restarted on it, every transaction, the history and every notification answer from the file"
    )
    func recordIsTheJournal() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "appstore-record-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func start() throws -> SandboxAppStore {
            try SandboxAppStore(
                authority: try SandboxAppStoreCA(now: Self.now), receipts: Self.receiptSigner,
                bundleID: "com.example.app", appAppleID: 1234, merchantKeyID: "KEY1",
                merchantKey: Self.merchantKey.publicKey, clock: FixedClock(date: Self.now), folder: folder)
        }
        let store = try start()
        var bought: [String: String] = [:]
        for index in 0..<120 {
            let (id, signed) = try await store.purchase(
                productID: index % 3 == 0 ? "vip" : "coins",
                type: index % 3 == 0 ? "Auto-Renewable Subscription" : "Consumable", appAccountToken: UUID())
            bought[id] = signed
        }
        let refunded = try #require(bought.keys.sorted().first)
        let refund = try await store.refund(transactionID: refunded)
        bought[refunded] = refund

        let again = try start()
        for (id, signed) in bought {
            #expect(try await again.signedTransaction(id) == signed)
        }
        #expect(
            await again.latestNotification == nil, "a notification made before the restart is not the latest one made")
        let client = try await AppStoreServerAPIClient(
            signingKey: Self.merchantKey.pemRepresentation, keyID: "KEY1", issuerID: "issuer",
            bundleID: "com.example.app", baseURL: "http://sandbox.local/sandbox/appstore", transport: again.transport,
            clock: FixedClock(date: Self.now), sleep: { _ in })
        let notifications = try await Self.notificationHistory(client)
        #expect(notifications.count == 121)
        #expect(try await again.payments.count == 120)
        let receipt = try await again.appReceipt()
        #expect(!receipt.isEmpty)
        // Bought after the restart: the next id, kept with the rest.
        let (next, _) = try await again.purchase(productID: "coins", type: "Consumable", appAccountToken: nil)
        #expect(Int64(next)! > bought.keys.compactMap { Int64($0) }.max()!)
        #expect(try await start().signedTransaction(next) != nil)
    }

    @Test(
        "a merchant's server slower than the store: notifications wait in a bounded queue, the rest undelivered and in the history"
    )
    func slowMerchant() async throws {
        let (store, client, _) = try await Self.world()
        // A server that never answers: every post waits.
        await store.setNotificationSink { _ in
            try? await Task.sleep(for: .seconds(3600))
            return false
        }
        let sold = SandboxAppStore.outboxLimit + 76
        for _ in 0..<sold {
            _ = try await store.purchase(productID: "coins", type: "Consumable", appAccountToken: nil)
        }
        let undelivered = await store.undeliveredNotifications
        let waiting = sold - undelivered
        #expect(
            waiting >= SandboxAppStore.outboxLimit
                && waiting <= SandboxAppStore.outboxLimit + SandboxAppStore.postersAtOnce + 1)
        // Each one is in the notification history all the same.
        #expect(try await Self.notificationHistory(client).count == sold)
        await store.setNotificationSink(nil)
    }
}
