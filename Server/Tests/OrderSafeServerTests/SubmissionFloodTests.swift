import Foundation
import HummingbirdTesting
import LedgerTestSupport
import OrderSafeModel
import Sandbox
import Testing

@testable import Engine
@testable import OrderSafeServer

/// What any signed-in user can make the server keep: junk is kept as refused signals are (a few hundred bytes,
/// purged later), a forged chain is no held purchase, and held purchases are bounded per user without a genuine one
/// ever being dropped before a replay tried it.
@Suite("Submission floods: junk fills no disk, forged chains are refused, held purchases stay bounded and replayable")
struct SubmissionFloodTests {
    static let coins = AppStoreFlowTests.coins

    @Test(
        "junk receipts, transactions and restores of 700 KB each keep at most their first 512 bytes, refused",
        arguments: TestEngine.available)
    func junkFillsNoDisk(engine: TestEngine) async throws {
        try await TestServer.withComponents(engine: engine) { client, components, _ in
            let mallory = try await TestServer.token("mallory", lifetime: 86400)
            let junk = String(repeating: "A", count: 700_000)
            let before = try await components.ledger.inboxFootprint()
            for index in 0..<10 {
                let variant = junk + String(index)
                for (body, path, code) in [
                    (#"{"receipt":"\#(variant)"}"#, "/v1/appstore/transactions", "invalid_receipt"),
                    (#"{"signed_transaction":"\#(variant)"}"#, "/v1/appstore/transactions", "invalid_transaction"),
                    (#"{"signed_transactions":["\#(variant)"]}"#, "/v1/appstore/sync", "invalid_transaction"),
                ] {
                    let response = try await AppStoreFlowTests.submit(client, token: mallory, body, path: path)
                    #expect(response.status == .ok, "\(path): \(String(buffer: response.body).prefix(200))")
                    let answer = try response.decoded(AppStoreSubmissionResponse.self)
                    #expect(answer.verdict == .rejected && answer.transactions.first?.error?.code == code)
                }
            }
            let after = try await components.ledger.inboxFootprint()
            #expect(after.entries - before.entries <= 30)
            #expect(after.bodyBytes - before.bodyBytes <= 30 * 512, "\(after.bodyBytes - before.bodyBytes) bytes kept")
            // Kept as refused: purged with the refused notifications after their days.
            _ = try await components.ledger.purgeRefusedInbound(
                before: TestServer.now.addingTimeInterval(8 * 86400), keeping: 100_000)
            #expect(try await components.ledger.inboxFootprint().entries == before.entries)
        }
    }

    @Test("what one user's refused submissions keep is bounded by a budget an hour; another user's are still kept")
    func refusalBudget() async throws {
        try await TestServer.withComponents { client, components, _ in
            let mallory = try await TestServer.token("mallory", lifetime: 86400)
            let before = try await components.ledger.inboxFootprint()
            for index in 0..<140 {  // 140 refused submissions of 512 bytes kept each would be 70 KiB
                let body = #"{"signed_transaction":"\#(index)\#(String(repeating: "x", count: 600))"}"#
                let answer = try await AppStoreFlowTests.submit(client, token: mallory, body)
                #expect(try answer.decoded(AppStoreSubmissionResponse.self).verdict == .rejected)
            }
            let after = try await components.ledger.inboxFootprint()
            #expect(after.bodyBytes - before.bodyBytes <= 64 << 10, "\(after.bodyBytes - before.bodyBytes) bytes")
            #expect(after.entries - before.entries == (64 << 10) / 512)
            let eve = try await TestServer.token("eve", lifetime: 86400)
            _ = try await AppStoreFlowTests.submit(client, token: eve, #"{"signed_transaction":"junk"}"#)
            #expect(try await components.ledger.inboxFootprint().entries == after.entries + 1)
        }
    }

    @Test("a refusal budget is per user and per clock hour, and tracks a bounded number of users")
    func budgetUnit() {
        let budget = RefusalBudget(bytesPerHour: 1000, maxUsers: 2)
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        #expect(budget.spend(600, user: "a", now: now) && !budget.spend(600, user: "a", now: now))
        #expect(budget.spend(400, user: "a", now: now))
        #expect(budget.spend(600, user: "b", now: now) && !budget.spend(1, user: "c", now: now))
        #expect(budget.spend(600, user: "a", now: now.addingTimeInterval(3600)))
    }

    @Test(
        "a genuine receipt padded with junk characters is kept once, as its bytes encode; overlong identifiers are refused"
    )
    func paddedReceipt() async throws {
        try await TestServer.withComponents { client, components, _ in
            let bob = try await TestServer.token("bob", lifetime: 86400)
            let store = components.sandbox!.appStore
            let order = try await TestServer.createOrder(client, token: bob).decoded(OrderResponse.self).order
            let (id, _) = try await store.purchase(productID: Self.coins)
            let receipt = try await store.appReceipt()
            let before = try await components.ledger.inboxFootprint()
            for padding in ["!", "*", "\\n"] {
                let padded = receipt + String(repeating: padding, count: 100_000)
                let response = try await AppStoreFlowTests.submit(
                    client, token: bob,
                    #"{"receipt":"\#(padded)","transaction_id":"\#(id)","application_username":"\#(order.orderUUID.uuidString)"}"#
                )
                let answer = try response.decoded(AppStoreSubmissionResponse.self)
                #expect(answer.verdict == .recorded && answer.transactions.first?.order?.orderNo == order.orderNo)
            }
            let after = try await components.ledger.inboxFootprint()
            #expect(after.entries - before.entries == 1)
            #expect(after.bodyBytes - before.bodyBytes < Int64(receipt.utf8.count) + 512)
            #expect(try await AppStoreFlowTests.balance(client, token: bob) == 60)

            let long = String(repeating: "9", count: 65)
            let refused = try await AppStoreFlowTests.submit(
                client, token: bob, #"{"receipt":"\#(receipt)","transaction_id":"\#(long)"}"#)
            #expect(refused.status == .badRequest)
        }
    }

    @Test("a transaction signed under a chain of one's own is rejected, never held, however many come")
    func forgedChains() async throws {
        try await TestServer.withComponents { client, components, _ in
            let store = components.sandbox!.appStore
            let impostor = try SandboxAppStoreCA(now: Date(timeIntervalSince1970: 1_795_000_000))
            for user in 0..<3 {
                let token = try await TestServer.token("forger\(user)", lifetime: 86400)
                for _ in 0..<5 {
                    let (_, genuine) = try await store.purchase(productID: Self.coins)
                    let forged = try impostor.sign(Self.payload(of: genuine))
                    let response = try await AppStoreFlowTests.submit(
                        client, token: token, #"{"signed_transaction":"\#(forged)"}"#)
                    #expect(response.status == .ok, "\(String(buffer: response.body))")
                    let answer = try response.decoded(AppStoreSubmissionResponse.self)
                    #expect(
                        answer.verdict == .rejected && answer.transactions.first?.error?.code == "invalid_transaction")
                    #expect(answer.transactions.first?.error?.message.contains("INVALID_CHAIN") == true)
                }
            }
            #expect(try await components.ledger.heldSubmissionCount() == 0)
        }
    }

    @Test(
        "held purchases: capped per user; never purged before a replay tried them; replayed page by page once fixed, each credited once"
    )
    func heldBoundedAndReplayed() async throws {
        let (base, wrong) = try await HeldSubmissionsTests.wrongBundleSettings()
        let cap = AppStorePayments.heldPerUser
        let purchases = cap + 3
        let signed = Signed()
        try await TestServer.withComponents(extra: wrong) { client, components, _ in
            let store = components.sandbox!.appStore
            let token = try await TestServer.token("buyer", lifetime: 86400)
            let other = try await TestServer.token("other", lifetime: 86400)
            for _ in 0..<purchases {
                let order = try await TestServer.createOrder(client, token: token).decoded(OrderResponse.self).order
                let (_, jws) = try await store.purchase(productID: Self.coins, appAccountToken: order.orderUUID)
                let answer = try await AppStoreFlowTests.submit(
                    client, token: token, #"{"signed_transaction":"\#(jws)"}"#)
                #expect(try answer.status == .serviceUnavailable && answer.errorCode() == "transaction_held")
                await signed.add(jws)
            }
            // One user's flood holds at most `cap`; another user's purchase is still kept.
            #expect(try await components.ledger.heldSubmissionCount() == cap)
            let order = try await TestServer.createOrder(client, token: other).decoded(OrderResponse.self).order
            let (_, jws) = try await store.purchase(productID: Self.coins, appAccountToken: order.orderUUID)
            _ = try await AppStoreFlowTests.submit(client, token: other, #"{"signed_transaction":"\#(jws)"}"#)
            #expect(try await components.ledger.heldSubmissionCount() == cap + 1)
            // Nothing a replay has not tried is purged, however small the limit.
            #expect(try await components.ledger.purgeHeldSubmissions(keeping: 0) == 0)
            let appStore = try #require(components.appStore)
            let early = try await appStore.replayHeld(pageSize: 4)
            #expect(early == .init(recorded: 0, stillHeld: cap + 1, failed: 0))
            // Tried once: the purge may now drop the oldest beyond its limit.
            #expect(try await components.ledger.purgeHeldSubmissions(keeping: cap - 5) == 6)
        }
        try await TestServer.withComponents(extra: base) { client, components, _ in
            let appStore = try #require(components.appStore)
            let replay = try await appStore.replayHeld(pageSize: 4)
            #expect(replay == .init(recorded: cap - 5, stillHeld: 0, failed: 0), "every page, not the first")
            #expect(try await components.ledger.heldSubmissionCount() == 0)
            let token = try await TestServer.token("buyer", lifetime: 86400)
            // The devices submit what was never kept or was dropped: each credited once.
            for jws in await signed.all {
                let again = try await AppStoreFlowTests.submit(client, token: token, jws: jws)
                #expect(again.verdict == .recorded)
            }
            #expect(try await AppStoreFlowTests.balance(client, token: token) == Int64(60 * purchases))
        }
    }

    actor Signed {
        private(set) var all: [String] = []
        func add(_ jws: String) { all.append(jws) }
    }

    /// The payload of a compact JWS, as JSON text.
    static func payload(of jws: String) -> String {
        let segment = String(jws.split(separator: ".")[1])
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return String(decoding: Data(base64Encoded: base64) ?? Data(), as: UTF8.self)
    }
}
