import Foundation
import Hummingbird
import LedgerTestSupport
import OrderSafeKit
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// The app's own purchase (`AppTransaction`) through the SDK, the stand-ins and the sandbox: verified by the server
/// and kept per user and Apple ID, never another user's; a forged one refused.
extension ClientSDKEndToEndTests {
    @Test(
        "AppTransaction: each Apple ID's download kept for the user who showed it, once; a forged one refused",
        .timeLimit(.hang))
    func appTransactionKeptPerUser() async throws {
        try await Self.withLiveServer(phone: "app-transaction") { base, alice, folder in
            // Alice's old phone's Apple ID first had the app at 0.9, when it was paid; her new one at 1.0.
            _ = try await AlipayFlowTests.request(
                base + "/sandbox/appstore/devices/app-old-phone/original-app-version", method: .POST, token: nil,
                body: #"{"version":"0.9"}"#)
            var answers: [AppPurchasesResponse] = []
            for (phone, journal) in [("app-old-phone", "old"), ("app-new-phone", "new"), ("app-old-phone", "old")] {
                StandInDevice.connect(StandInDevice(server: URL(string: base)!, deviceID: phone))
                let safe = Self.app(
                    base: base, token: alice, user: "alice", journal: folder.appendingPathComponent(journal))
                answers.append(try await safe.sendAppTransaction())
            }
            let kept = try #require(answers.last)
            #expect(kept.userID == "alice")
            #expect(kept.purchases.count == 2, "one per Apple ID, the old phone's twice kept once")
            #expect(kept.purchases.map(\.originalApplicationVersion) == ["0.9", "1.0"], "earliest first")
            #expect(kept.originalApplicationVersion == "0.9")
            #expect(kept.purchases.allSatisfy { $0.environment == "Sandbox" })

            let bob = try await TestServer.token("bob", issuedAt: Date())
            let bobs = try OrderSafeJSON.decoder().decode(
                AppPurchasesResponse.self,
                from: Data(
                    try await AlipayFlowTests.request(
                        base + "/v1/appstore/app-transaction", method: .GET, token: bob, body: nil)))
            #expect(bobs.userID == "bob" && bobs.purchases.isEmpty, "alice's are not bob's")

            // A JWS whose payload was changed after signing (an earlier version claimed): refused, nothing kept.
            let signed = try await StoreKitStandIn.AppTransaction.shared.jwsRepresentation
            let parts = signed.split(separator: ".").map(String.init)
            var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            let decoded = try #require(Data(base64Encoded: base64))
            var claims = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
            #expect(claims["originalApplicationVersion"] as? String == "0.9")
            claims["originalApplicationVersion"] = "0.1"
            let changed = try JSONSerialization.data(withJSONObject: claims).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            let forged = [parts[0], changed, parts[2]].joined(separator: ".")
            do {
                let kept = try await AlipayFlowTests.request(
                    base + "/v1/appstore/app-transaction", method: .POST, token: bob,
                    body: #"{"signed_app_transaction":"\#(forged)"}"#)
                Issue.record("a forged app transaction was kept: \(String(decoding: kept, as: UTF8.self))")
            } catch let error as HTTPError {
                #expect(error.status.code == 400 && error.body?.contains("invalid_app_transaction") == true)
            }
        }
    }
}
