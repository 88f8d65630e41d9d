import Alipay
import Foundation
import OrderSafeModel
import _CryptoExtras

/// Alipay notification verification (parse + canonicalise + RSA2 verify + typing) against the raw RSA-2048
/// verification it is built on, both measured here on one core.
enum AlipayBenchmark {
    static func run() async throws -> Bool {
        let appKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let alipayKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let credentials = try AlipayCredentials(
            appID: "2021000000000001", appPrivateKey: appKey.pemRepresentation,
            alipayPublicKey: alipayKey.publicKey.pemRepresentation)
        let body = Array(
            try AlipaySideSigner(privateKey: alipayKey).notificationBody([
                "notify_id": "2026112201222162644199160501632046", "notify_type": "trade_status_sync",
                "notify_time": "2026-11-22 16:26:45", "gmt_create": "2026-11-22 16:26:32",
                "gmt_payment": "2026-11-22 16:26:43",
                "charset": "utf-8", "version": "1.0", "app_id": "2021000000000001", "auth_app_id": "2021000000000001",
                "seller_id": "2088721003899159", "buyer_id": "2088722003899169",
                "out_trade_no": "OS20261122-K7QZ3M9X2A",
                "trade_no": "2026112222001499160501589436", "trade_status": "TRADE_SUCCESS", "total_amount": "99.00",
                "receipt_amount": "99.00", "invoice_amount": "99.00", "buyer_pay_amount": "99.00",
                "point_amount": "0.00",
                "subject": "礼盒 Gift box", "fund_bill_list": #"[{"amount":"99.00","fundChannel":"ALIPAYACCOUNT"}]"#,
            ]).utf8)
        let verifier = AlipayNotificationVerifier(credentials: credentials)
        guard (try? verifier.verify(body: body)) != nil else { fatalError("benchmark notification does not verify") }

        // The sign content of this notification is about 600 bytes.
        let raw = try await rawRSAVerifications(key: alipayKey, length: 600)
        let notifications = try await operationsPerSecond { _ = try verifier.verify(body: body) }
        return compare(
            "Alipay", operation: "notification verifications (parse+verify+type)", value: notifications, raw: raw,
            target: 20_000)
    }
}
