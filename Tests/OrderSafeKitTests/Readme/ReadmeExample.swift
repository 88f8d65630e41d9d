// The code of docs/sdk.md's "Add OrderSafeKit to your app", compiled here against StoreKitStandIn and the vendor SDK
// stand-ins; ReadmeExampleTests checks the guide shows it verbatim.
// README: begin
import Foundation
import OrderSafeKit

/// Once, at launch (the app delegate's didFinishLaunching, or your App's init). `userID`: who is signed in now,
/// nil when nobody is yet.
func makeOrderSafe(userID: String?, token: @escaping @Sendable () async throws -> String) -> OrderSafe {
    let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
    let orderSafe = OrderSafe(
        configuration: OrderSafeConfiguration(
            serverURL: URL(string: "https://pay.example.com/")!,
            token: token,  // your user's bearer token, asked for before each call
            userID: userID,  // purchases, entitlements and outcomes are this user's only
            journalDirectory: support.appendingPathComponent("OrderSafe", isDirectory: true),
            alipay: AlipayPayments.shared, wechatPay: WeChatPayments.shared))
    Task { await orderSafe.start() }  // the one Transaction.updates listener, and resume what was on its way
    return orderSafe
}

/// Your sign-in and sign-out: signed out, OrderSafe buys and shows nothing, and forgets the cached entitlements.
func userSignedIn(_ userID: String, orderSafe: OrderSafe) async { await orderSafe.logIn(userID) }
func userSignedOut(orderSafe: OrderSafe) async { await orderSafe.logOut() }

/// A Buy button: one call for every channel; the message is in Simplified Chinese or English.
func buy(_ productID: String, through channel: Channel, with orderSafe: OrderSafe) async -> String {
    let outcome = await orderSafe.purchase(productID, through: channel)
    return outcome.message()
}

/// Alipay: hand the order string to the SDK; its answer comes back in the callback, or through
/// `application(_:open:options:)` when Alipay reopened the app.
final class AlipayPayments: AlipayBridge {
    static let shared = AlipayPayments()
    let relay = PaymentResultRelay<AlipayResult>()

    func pay(orderString: String) async -> AlipayResult {
        await relay.wait(superseded: AlipayResult(resultStatus: "6001")) {
            DispatchQueue.main.async {
                AlipaySDK.defaultService().payOrder(orderString, fromScheme: "myapp-alipay") { result in
                    let answer = AlipayResult(dictionary: result ?? [:])
                    Task { await AlipayPayments.shared.relay.deliver(answer) }
                }
            }
        }
    }

    /// From `application(_:open:options:)` when `url.host == "safepay"`.
    func handleOpen(_ url: URL) {
        AlipaySDK.defaultService().processOrder(withPaymentResult: url) { result in
            let answer = AlipayResult(dictionary: result ?? [:])
            Task { await AlipayPayments.shared.relay.deliver(answer) }
        }
    }
}

/// WeChat Pay: fill a PayReq and send it; the answer arrives in onResp (after `WXApi.handleOpen(url, delegate:)`
/// in `application(_:open:options:)`, or `WXApi.handleOpenUniversalLink` for universal links).
final class WeChatPayments: NSObject, WeChatPayBridge, WXApiDelegate, @unchecked Sendable {
    static let shared = WeChatPayments()
    let relay = PaymentResultRelay<WeChatPayResult>()

    func pay(_ request: WeChatPayRequest) async -> WeChatPayResult {
        await relay.wait(superseded: WeChatPayResult(errCode: -2)) {
            DispatchQueue.main.async {
                let req = PayReq()
                req.partnerId = request.partnerID
                req.prepayId = request.prepayID
                req.nonceStr = request.nonceStr
                req.timeStamp = request.timeStamp
                req.package = request.package
                req.sign = request.sign
                WXApi.send(req) { sent in
                    if !sent { Task { await WeChatPayments.shared.relay.deliver(WeChatPayResult(errCode: -3)) } }
                }
            }
        }
    }

    func onResp(_ resp: BaseResp) {
        guard resp is PayResp else { return }
        let result = WeChatPayResult(errCode: resp.errCode, errStr: resp.errStr)
        Task { await relay.deliver(result) }
    }
}

// OrderSafe sees the app become active by itself (UIKit's and AppKit's did-become-active notification, which
// SwiftUI apps get too) and tells each bridge: a buyer who came back by the app switcher or the status bar's back
// link, without the payment app's answer, is not left waiting — after a short grace the server is asked instead —
// and what was on its way is resumed. The bridges only forward it to their relays:
extension AlipayPayments {
    func appBecameActive() async { await relay.appBecameActive() }
}

extension WeChatPayments {
    func appBecameActive() async { await relay.appBecameActive() }
}
// README: end
