import ChannelSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOCore
import Testing

@testable import OrderSafeServer

@Suite("A built-in provider that cannot load its journal")
struct SandboxJournalStartTests {
    @Test(
        "the server starts and serves on a data folder whose WeChat Pay journal is larger than the sandbox reads and whose Alipay journal is damaged: those two refuse, saying why; the App Store sells"
    )
    func serverStartsAnyway() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ordersafe-journals-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = directory.appendingPathComponent("sandbox")
        try FileManager.default.createDirectory(at: sandbox, withIntermediateDirectories: true)
        // A busy load test's journal: past the 512 MiB the sandbox reads back (sparse: no disk is used).
        let oversized = sandbox.appendingPathComponent("wechatpay.journal")
        #expect(FileManager.default.createFile(atPath: oversized.path, contents: nil))
        let handle = try FileHandle(forWritingTo: oversized)
        try handle.truncate(atOffset: 513 * 1024 * 1024)
        try handle.close()
        try Data("not a record\n{}\n".utf8).write(to: sandbox.appendingPathComponent("alipay.journal"))

        let settings = try await TestServer.settings(extra: ["ORDERSAFE_SERVER_DATA_DIR": directory.path])
        let app = try await OrderSafeApplication.build(
            settings: settings, clock: FixedClock(date: TestServer.now), logger: TestLog.logger)
        let alice = try await TestServer.token("alice")
        try await app.test(.router) { client in
            #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok)
            for (path, file) in [
                ("/sandbox/wechatpay/pay", "wechatpay.journal"), ("/sandbox/alipay/gateway.do", "alipay.journal"),
            ] {
                let refused = try await client.execute(uri: path, method: .post, body: ByteBuffer(string: "{}"))
                let text = String(buffer: refused.body)
                #expect(refused.status == .serviceUnavailable, "\(path): \(refused.status)")
                #expect(text.contains(#""code":"sandbox_unavailable""#) && text.contains(file), "\(text)")
            }
            let wechat = try await TestServer.createOrder(
                client, token: alice, product: "gift_box", channel: "wechatpay")
            #expect(wechat.status.code >= 500, "no order opened on a provider that cannot answer")
            let appstore = try await TestServer.createOrder(
                client, token: alice, product: "coins_60", channel: "appstore")
            #expect(appstore.status == .created, "the other channels sell")
        }
        let size = try FileManager.default.attributesOfItem(atPath: oversized.path)[.size] as? Int
        #expect(size == 513 * 1024 * 1024, "what the provider kept is left as it was, for the operator")
    }
}
