import Alipay
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import OrderSafeModel
import Sandbox
import Testing
import _CryptoExtras

struct FixedClock: WallClock {
    var date: Date
    func now() -> Date { date }
}

/// Keys for a merchant and for a simulated Alipay, generated once per test run.
enum AlipayFixture {
    static let appID = "2021000000000001"
    static let appKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let alipayKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static var credentials: AlipayCredentials {
        try! AlipayCredentials(
            appID: appID, appPrivateKey: appKey.pemRepresentation,
            alipayPublicKey: alipayKey.publicKey.pemRepresentation)
    }

    static var alipaySigner: AlipaySideSigner { AlipaySideSigner(privateKey: alipayKey) }

    static func sandbox(folder: URL? = nil) throws -> SandboxAlipay {
        try SandboxAlipay(
            appID: appID, alipayKey: alipayKey, appPublicKey: appKey.publicKey, timeScale: 0.00001,
            clock: FixedClock(date: now),
            folder: folder)
    }

    /// A notification receiver that verifies with our verifier and answers `success` only after `failuresFirst`
    /// refusals; records what it accepted.
    actor Receiver {
        let verifier = AlipayNotificationVerifier(credentials: AlipayFixture.credentials)
        var failuresFirst: Int
        private(set) var accepted: [AlipayNotification] = []
        private(set) var rejected: [AlipayNotificationError] = []

        init(failuresFirst: Int = 0) {
            self.failuresFirst = failuresFirst
        }

        func receive(_ body: [UInt8]) -> String {
            do {
                let notification = try verifier.verify(body: body)
                if failuresFirst > 0 {
                    failuresFirst -= 1
                    return "failure"
                }
                accepted.append(notification)
                return "success"
            } catch {
                rejected.append(error)
                return "failure"
            }
        }
    }

    /// Runs the sandbox gateway and a notification receiver on one live loopback server; `body` gets the base URL.
    static func live(
        sandbox: SandboxAlipay, receiver: Receiver, _ body: @escaping @Sendable (String) async throws -> Void
    ) async throws {
        let router = Router()
        SandboxAlipayRoutes<BasicRequestContext>(alipay: sandbox).addRoutes(to: router.group("alipay"))
        router.post("notify") { request, _ in
            var request = request
            let bytes = try await request.collectBody(upTo: 1 << 20)
            return await receiver.receive(Array(buffer: bytes))
        }
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        try await app.test(.live) { client in
            try await body("http://127.0.0.1:\(client.port!)")
        }
    }

    /// The deadline of a test's own request to the sandbox over loopback: far, for the same reason as the client's
    /// (at 5 seconds, the lifecycle test's request for a missing bill ran out in a bare machine's CI run).
    static let deadline: TimeAmount = .seconds(120)

    /// A client of the sandbox at `base`. Its deadline is far: over real loopback no deadline is near enough for a
    /// loaded machine to trip it (at 2 seconds an attempt, the lifecycle test failed in full runs whose first minutes
    /// ran every suite at once); timeouts are retried all the same (AlipayGatewayRetryTests, on cue).
    static func client(_ base: String) -> AlipayGatewayClient {
        let retry = AlipayGatewayClient.RetryPolicy(attempts: 3, firstDelay: .milliseconds(1), timeout: .seconds(30))
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return AlipayGatewayClient(
            credentials: credentials, gatewayURL: base + "/alipay/gateway.do", retry: retry,
            clock: FixedClock(date: now),
            logger: logger)
    }

    static func orderString(_ outTradeNo: String, fen: Int64 = 9900, notifyURL: String) throws -> String {
        try AlipayRequestSigner(credentials: credentials).orderString(
            for: AlipayAppPayOrder(
                outTradeNo: outTradeNo, amount: Money(amountMinor: fen, currency: .cny), subject: "Gift box",
                notifyURL: notifyURL),
            at: now)
    }
}
