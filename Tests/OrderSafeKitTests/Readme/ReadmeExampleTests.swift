import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// The SDK guide's app code (docs/sdk.md, and the DocC catalog's Getting Started) compiles (it is ReadmeExample.swift)
/// and works with the vendor SDKs' answers.
@Suite("README: Add OrderSafeKit to your app")
struct ReadmeExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(
        "the SDK guide (docs/sdk.md) and the DocC catalog's Getting Started show ReadmeExample.swift's code verbatim",
        arguments: ["docs/sdk.md", "Sources/OrderSafeKit/OrderSafeKit.docc/GettingStarted.md"])
    func guidesShowTheCompiledCode(_ guide: String) throws {
        let source = try String(
            contentsOf: Self.root.appendingPathComponent("Tests/OrderSafeKitTests/Readme/ReadmeExample.swift"),
            encoding: .utf8)
        let start = try #require(source.range(of: "// README: begin\n"))
        let end = try #require(source.range(of: "// README: end"))
        let snippet = String(source[start.upperBound..<end.lowerBound])
        let text = try String(contentsOf: Self.root.appendingPathComponent(guide), encoding: .utf8)
        #expect(
            text.contains("```swift\n" + snippet + "```"),
            "\(guide) must show Tests/OrderSafeKitTests/Readme/ReadmeExample.swift's block")
        let blocks = text.components(separatedBy: "```swift\n").count - 1
        #expect(blocks == 1, "\(guide) has \(blocks) Swift samples; each must be compiled by a test")
    }

    @Test("the README's bridges hand over the vendor SDKs' answers, including a payment app reopening the app")
    func bridges() async throws {
        AlipaySDK.nextResult = ["resultStatus": "9000", "memo": "", "result": "{}"]
        #expect(
            await AlipayPayments.shared.pay(orderString: "app_id=1&biz_content=x")
                == AlipayResult(resultStatus: "9000", memo: ""))
        #expect(AlipaySDK.paidOrders.last == "app_id=1&biz_content=x")
        WXApi.handleOpen(URL(string: "wx1://pay/?returnKey=&ret=0")!, delegate: WeChatPayments.shared)
        WXApi.nextErrCode = -2
        let request = try #require(
            WeChatPayRequest(
                WeChatPayInvocation(
                    appid: "wx1", partnerid: "19", prepayid: "wx2026", package: "Sign=WXPay", noncestr: "n",
                    timestamp: "1795000000", sign: "s")))
        #expect(await WeChatPayments.shared.pay(request).errCode == -2)
        #expect(WXApi.sent.last?.prepayId == "wx2026" && WXApi.sent.last?.timeStamp == 1_795_000_000)
        let made = makeOrderSafe(userID: "user-1", token: { "token" })
        #expect(await made.userID == "user-1")
        await userSignedOut(orderSafe: made)
        #expect(await made.userID == nil)
        await userSignedIn("user-2", orderSafe: made)
        #expect(await made.userID == "user-2")
        await made.stop()
    }
}
