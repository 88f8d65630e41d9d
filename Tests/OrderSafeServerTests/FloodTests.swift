import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OrderSafeModel
import Testing
@testable import OrderSafeServer

/// Under fire: forged notifications and oversized bodies from anyone while real purchases go on.
@Suite("Flood: forged and oversized traffic leaves real purchases settled and the inbox bounded")
struct FloodTests {
    static let forgedPerChannel = 120
    static let purchases = 24

    @Test("forged WeChat Pay, App Store and Alipay notifications and oversized bodies, beside real App Store purchases")
    func flood() async throws {
        try await TestServer.withComponents { client, components, _ in
            let store = components.sandbox!.appStore
            let filler = String(repeating: "A", count: 200_000)
            let started = ContinuousClock.now
            let (statuses, results) = try await withThrowingTaskGroup(of: ([Int], [AppStoreTransactionResult]).self) { group in
                group.addTask {
                    var statuses: [Int] = []
                    for index in 0..<Self.forgedPerChannel {
                        let wechat = try await client.execute(
                            uri: "/v1/notify/wechatpay", method: .post,
                            headers: [
                                HTTPField.Name("Wechatpay-Timestamp")!: "\(Int(TestServer.now.timeIntervalSince1970))",
                                HTTPField.Name("Wechatpay-Nonce")!: "n\(index)", HTTPField.Name("Wechatpay-Signature")!: "c2ln",
                                HTTPField.Name("Wechatpay-Serial")!: "PUB_KEY_ID_0", .contentType: "application/json",
                            ],
                            body: ByteBuffer(string: #"{"id":"\#(index)","pad":"\#(filler)"}"#))
                        let apple = try await client.execute(
                            uri: "/v1/notify/appstore", method: .post, headers: [.contentType: "application/json"],
                            body: ByteBuffer(string: #"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.\#(filler).\#(index)"}"#))
                        let alipay = try await client.execute(
                            uri: "/v1/notify/alipay", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                            body: ByteBuffer(string: "notify_id=\(index)&sign=Zm9yZ2Vk&pad=\(filler)"))
                        let oversized = try await client.execute(
                            uri: "/v1/notify/appstore", method: .post, headers: [.contentType: "application/json"],
                            body: ByteBuffer(string: String(repeating: "B", count: 300_000)))
                        statuses += [wechat.status.code, apple.status.code, oversized.status.code]
                        #expect(String(buffer: alipay.body) == "failure")
                    }
                    return (statuses, [])
                }
                group.addTask {
                    var results: [AppStoreTransactionResult] = []
                    for index in 0..<Self.purchases {
                        let token = try await TestServer.token("buyer\(index)")
                        let order = try await TestServer.createOrder(client, token: token).decoded(OrderResponse.self).order
                        let (_, jws) = try await store.purchase(productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
                        results.append(try await AppStoreFlowTests.submit(client, token: token, jws: jws))
                    }
                    return ([], results)
                }
                var statuses: [Int] = [], results: [AppStoreTransactionResult] = []
                for try await (s, r) in group {
                    statuses += s
                    results += r
                }
                return (statuses, results)
            }
            let elapsed = ContinuousClock.now - started
            #expect(results.count == Self.purchases && results.allSatisfy { $0.verdict == .recorded })
            #expect(statuses.allSatisfy { (400..<500).contains($0) }, "\(Set(statuses))")
            let footprint = try await components.ledger.inboxFootprint()
            // Every forged body is cut to its first 512 bytes once refused; only the real submissions keep theirs.
            let bound = Int64(3 * Self.forgedPerChannel * 600 + Self.purchases * 8_000)
            #expect(footprint.bodyBytes < bound, "inbox holds \(footprint.bodyBytes) bytes in \(footprint.entries) entries")
            print("flood: \(3 * Self.forgedPerChannel) forged notifications and \(Self.forgedPerChannel) oversized bodies beside "
                + "\(Self.purchases) purchases in \(elapsed): \(results.count) recorded, inbox \(footprint.entries) entries, "
                + "\(footprint.bodyBytes) body bytes (forged bodies sent: \(3 * Self.forgedPerChannel * 200_000) bytes)")
        }
    }

    @Test("notifications with headers longer than any provider sends are refused before they are stored: the inbox does not grow")
    func hugeHeaders() async throws {
        try await TestServer.withComponents { client, components, _ in
            let before = try await components.ledger.inboxFootprint()
            let parameter = "application/x-www-form-urlencoded; x=" + String(repeating: "A", count: 75_000)
            for index in 0..<300 {
                let alipay = try await client.execute(
                    uri: "/v1/notify/alipay", method: .post, headers: [.contentType: parameter], body: ByteBuffer(string: "a=\(index)"))
                #expect(alipay.status == .badRequest && String(buffer: alipay.body) == "failure")
                let wechat = try await client.execute(
                    uri: "/v1/notify/wechatpay", method: .post,
                    headers: [HTTPField.Name("Wechatpay-Nonce")!: String(repeating: "n", count: 75_000), .contentType: "application/json"],
                    body: ByteBuffer(string: #"{"id":"\#(index)"}"#))
                #expect(wechat.status == .badRequest)
            }
            let after = try await components.ledger.inboxFootprint()
            #expect(after.entries == before.entries && after.headerBytes == before.headerBytes,
                    "300 hostile requests per channel grew the inbox by \(after.headerBytes - before.headerBytes) header bytes")
            // A genuine-looking refused notification is still kept (bounded), with its headers as sent.
            let forged = try await client.execute(
                uri: "/v1/notify/alipay", method: .post, headers: [.contentType: "application/x-www-form-urlencoded; charset=utf-8"],
                body: ByteBuffer(string: "notify_id=1&sign=Zm9yZ2Vk"))
            #expect(String(buffer: forged.body) == "failure")
            let kept = try await components.ledger.inboxFootprint()
            #expect(kept.entries == before.entries + 1 && kept.headerBytes - before.headerBytes < 200)
        }
    }
}
