import AppStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOCore
import Testing

@testable import OrderSafeServer

@Suite("The built-in App Store over HTTP")
struct SandboxAppStoreRouteTests {
    @Test(
        "a purchase is signed by the root written to the data folder; the receipt validates; verifyReceipt answers 21007 then 0"
    )
    func purchaseAndReceipt() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ordersafe-appstore-\(UUID().uuidString)"
        ).path
        let settings = try await TestServer.settings(extra: ["ORDERSAFE_SERVER_DATA_DIR": directory])
        let app = try await OrderSafeApplication.build(
            settings: settings, clock: FixedClock(date: TestServer.now), logger: TestLog.logger)
        try await app.test(.router) { client in
            let bought = try await client.execute(
                uri: "/sandbox/appstore/purchase", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"product_id":"com.example.coins60"}"#))
            #expect(bought.status == .ok)
            let signed = try #require(
                try JSONSerialization.jsonObject(with: Data(buffer: bought.body)) as? [String: String])[
                    "signed_transaction"]
            let roots = try AppleRootCertificates.read(
                paths: [directory + "/sandbox/appstore-root.der"], requireApple: false)
            let verifier = SignedDataVerifier(
                rootCertificates: roots, bundleID: AppStoreSimulator.bundleID, appAppleID: nil,
                environment: .sandbox)
            #expect(try await verifier.verifyTransaction(try #require(signed)).productId == "com.example.coins60")

            let receipt = String(buffer: try await client.execute(uri: "/sandbox/appstore/receipt", method: .get).body)
            let receiptRoots = try AppleRootCertificates.read(
                paths: [directory + "/sandbox/appstore-receipt-root.der"], requireApple: false)
            guard
                case .valid(let decoded) = try await ReceiptValidator(rootCertificates: receiptRoots).validate(
                    try ReceiptParser.bytes(Array(receipt.utf8)))
            else {
                Issue.record("the sandbox receipt must validate against the root in the data folder")
                return
            }
            #expect(decoded.inApp.count == 1)
            for (path, status) in [("production", 21007), ("sandbox", 0)] {
                let answer = try await client.execute(
                    uri: "/sandbox/appstore/\(path)/verifyReceipt", method: .post,
                    headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"receipt-data":"\#(receipt)"}"#))
                #expect(try VerifyReceiptResponse(body: Array(buffer: answer.body)).status == status)
            }
            let faults = try await client.execute(
                uri: "/sandbox/appstore/faults", method: .post,
                body: ByteBuffer(string: #"{"faults":["rate_limited:5","nonsense"]}"#))
            #expect(faults.status == .badRequest)
        }
    }

    @Test(
        "the simulators' control routes refuse what their document refuses: a device id out of shape, an unknown or null member"
    )
    func strictControlRoutes() async throws {
        try await TestServer.run { client in
            for device in ["caf%C3%A9", String(repeating: "d", count: 65), "a.b"] {
                let answer = try await client.execute(
                    uri: "/sandbox/appstore/devices/\(device)/entitlements", method: .get)
                #expect(answer.status == .badRequest, "device '\(device)': \(answer.status)")
            }
            #expect(
                try await client.execute(uri: "/sandbox/appstore/devices/phone-1_A/entitlements", method: .get).status
                    == .ok)
            #expect(
                try await client.execute(uri: "/sandbox/appstore/devices/phone-1/updates?after=-1", method: .get).status
                    == .badRequest)
            for (path, body) in [
                ("/sandbox/alipay/faults", #"{"notifications":[],"gateway":null}"#),
                ("/sandbox/alipay/faults", #"{"notification":["drop"]}"#),
                ("/sandbox/wechatpay/faults", #"{"rotate_certificate":null}"#),
                ("/sandbox/appstore/faults", #"{"faults":["server_error"],"extra":1}"#),
                ("/sandbox/appstore/faults", #"{"faults":[],"faults":["server_error"]}"#),
                ("/sandbox/appstore/devices/phone-1/purchase", #"{"product_id":"com.example.coins60","confirm":null}"#),
                (
                    "/sandbox/appstore/devices/phone-1/deliver",
                    #"{"product_id":"com.example.ordersafe.coins60","from":"nowhere"}"#
                ),
                (
                    "/sandbox/appstore/devices/phone-1/deliver",
                    #"{"product_id":"com.example.ordersafe.coins60","from":"family_shared"}"#
                ),
                (
                    "/sandbox/appstore/devices/phone-1/deliver",
                    #"{"product_id":"com.example.ordersafe.removeads","from":"family_shared","offer_code":"X"}"#
                ),
                (
                    "/sandbox/appstore/devices/phone-1/deliver",
                    #"{"product_id":"com.example.ordersafe.vip.monthly","from":"renewal","original_transaction_id":"42"}"#
                ),
                (
                    "/sandbox/appstore/devices/phone-1/deliver",
                    #"{"product_id":"com.example.ordersafe.coins60","from":"renewal","original_transaction_id":"42"}"#
                ),
                (
                    "/sandbox/appstore/devices/phone-1/deliver",
                    #"{"product_id":"com.example.ordersafe.coins60","from":"offer_code","offer_code":""}"#
                ),
                (
                    "/sandbox/appstore/devices/phone-1/deliver",
                    #"{"product_id":"com.example.ordersafe.coins60","from":"other_device","app_account_token":"x"}"#
                ),
                (
                    "/sandbox/appstore/devices/phone-1/deliver",
                    #"{"product_id":"nothing","from":"offer_code","offer_code":"A"}"#
                ),
            ] {
                let answer = try await client.execute(
                    uri: path, method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: body))
                #expect(
                    answer.status == .badRequest, "\(path) \(body): \(answer.status) \(String(buffer: answer.body))")
            }
            let delivered = try await client.execute(
                uri: "/sandbox/appstore/devices/phone-1/deliver", method: .post,
                headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"product_id":"com.example.ordersafe.removeads","from":"family_shared"}"#))
            #expect(delivered.status == .ok, "\(String(buffer: delivered.body))")
            let updates = String(
                buffer: try await client.execute(uri: "/sandbox/appstore/devices/phone-1/updates?after=0", method: .get)
                    .body)
            #expect(updates.contains(#""cursor":1"#), "\(updates)")
            let queued = try await client.execute(
                uri: "/sandbox/alipay/faults", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"notifications":["drop"]}"#))
            #expect(queued.status == .ok && String(buffer: queued.body).contains("1"))
        }
    }
}
