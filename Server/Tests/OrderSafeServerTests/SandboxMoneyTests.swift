import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// The built-in simulators take no real money: whatever they pay is fulfilled, marked `sandbox`, and never revenue.
@Suite("Sandbox money: every simulated channel's payments are marked sandbox and kept out of revenue")
struct SandboxMoneyTests {
    @Test("Alipay and WeChat Pay payments from the simulators, by notification and by query, mark their orders sandbox")
    func simulatedChannelsAreSandbox() async throws {
        try await TestServer.withComponents { client, components, clock in
            let sandbox = components.sandbox!
            await sandbox.alipay.setNotificationSink { _, body in
                let response = try? await client.execute(
                    uri: "/v1/notify/alipay", method: .post,
                    headers: [.contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: body))
                return response.map { String(buffer: $0.body) == "success" } ?? false
            }
            await sandbox.wechatpay.setNotificationSink { _, headers, body in
                var fields: HTTPFields = [.contentType: "application/json"]
                for (name, value) in headers { if let field = HTTPField.Name(name) { fields[field] = value } }
                let response = try? await client.execute(
                    uri: "/v1/notify/wechatpay", method: .post, headers: fields, body: ByteBuffer(bytes: body))
                return response?.status == .noContent
            }
            let alice = try await TestServer.token("alice")
            func order(_ channel: String) async throws -> OrderResponse {
                try await TestServer.createOrder(client, token: alice, product: "gift_box", channel: channel).decoded(
                    OrderResponse.self)
            }
            // Paid and notified.
            let notifiedAlipay = try await order("alipay")
            let notifiedWeChat = try await order("wechatpay")
            try await sandbox.alipay.open(orderString: try #require(notifiedAlipay.alipay).orderString)
            try await sandbox.wechatpay.open(try #require(notifiedWeChat.wechatpay))
            await sandbox.alipay.settle()
            await sandbox.wechatpay.settle()
            // Paid, the notification lost, settled by the server's query.
            await sandbox.alipay.setNotificationSink { _, _ in false }
            await sandbox.wechatpay.setNotificationSink { _, _, _ in false }
            let queriedAlipay = try await order("alipay")
            let queriedWeChat = try await order("wechatpay")
            try await sandbox.alipay.open(orderString: try #require(queriedAlipay.alipay).orderString)
            try await sandbox.wechatpay.open(try #require(queriedWeChat.wechatpay))
            for paid in [queriedAlipay, queriedWeChat] {
                _ = try await components.reconciler.settle(orderNo: paid.order.orderNo)
            }

            for paid in [notifiedAlipay, notifiedWeChat, queriedAlipay, queriedWeChat] {
                let read = try await client.execute(
                    uri: "/v1/orders/\(paid.order.orderNo)", method: .get, headers: TestServer.bearer(alice))
                let shown = try read.decoded(OrderResponse.self).order
                #expect(
                    shown.status == .fulfilled && shown.sandbox,
                    "\(shown.channel) \(shown.status) sandbox=\(shown.sandbox)")
            }
            let overview = try await components.ledger.overview(
                now: clock.now(), days: 30, zone: TimeZone(identifier: "Asia/Shanghai")!)
            #expect(overview.revenue.isEmpty, "simulated money counted as revenue: \(overview.revenue)")
        }
    }

    @Test("an Alipay account on Alipay's own sandbox gateway is test money; the real gateway is not")
    func alipaySandboxGateway() async throws {
        var settings = try await TestServer.productionSettings(selling: [.alipay]).alipay!
        #expect(!settings.isAlipaySandbox)
        for gateway in [
            "https://openapi-sandbox.dl.alipaydev.com/gateway.do", "https://openapi.alipaydev.com/gateway.do",
        ] {
            settings.gatewayURL = gateway
            #expect(settings.isAlipaySandbox, "\(gateway)")
        }
        settings.gatewayURL = "https://alipaydev.com.attacker.example/gateway.do"
        #expect(!settings.isAlipaySandbox)
    }
}
