import Alipay
import ChannelSupport
import Crypto
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import _CryptoExtras

/// The real transport every provider and webhook call goes through, against a live loopback server.
@Suite("Provider transport: redirects are answers, never followed; oversized answers are refused once")
struct ProviderTransportTests {
    @Test("a 302 comes back as it is: the signed request and its headers never reach where it points")
    func noRedirects() async throws {
        let reached = Mutex<[String]>([])
        let router = Router()
        router.post("hook") { _, _ in
            Response(status: .found, headers: [.location: "/elsewhere"])
        }
        router.post("elsewhere") { request, _ in
            reached.withLock { $0.append(request.headers[.authorization] ?? "-") }
            return Response(status: .ok)
        }
        router.get("elsewhere") { request, _ in
            reached.withLock { $0.append(request.headers[.authorization] ?? "-") }
            return Response(status: .ok)
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let response = try await HTTPClientProviderTransport().send(
                method: "POST", url: "http://127.0.0.1:\(client.port!)/hook", headers: ["Authorization": "signature"],
                body: Array("{}".utf8), timeout: .seconds(120))
            #expect(response.status == 302)
        }
        #expect(reached.withLock { $0 }.isEmpty)
    }

    @Test(
        "an answer past the limit, announced or streamed, is refused once (ProviderResponseTooLarge), and a bill download stops at it"
    )
    func oversizedAnswers() async throws {
        let served = Mutex(0)
        let router = Router()
        router.get("announced") { _, _ in
            served.withLock { $0 += 1 }
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(repeating: 0x41, count: 3000)))
        }
        router.get("streamed") { _, _ in
            served.withLock { $0 += 1 }
            return Response(
                status: .ok,
                body: ResponseBody { writer in
                    for _ in 0..<6 { try await writer.write(ByteBuffer(repeating: 0x41, count: 500)) }
                    try await writer.finish(nil)
                })
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let transport = HTTPClientProviderTransport(maxResponseBytes: 2048)
            for path in ["announced", "streamed"] {
                await #expect(throws: ProviderResponseTooLarge.self) {
                    _ = try await transport.send(
                        method: "GET", url: "http://127.0.0.1:\(client.port!)/\(path)", headers: [:], body: [],
                        timeout: .seconds(120))
                }
            }
            #expect(served.withLock { $0 } == 2)
            // Through a channel's retry loop: one request, not three.
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let gateway = "http://127.0.0.1:\(client.port!)/gateway.do"
            let alipay = AlipayGatewayClient(
                credentials: try AlipayCredentials(
                    appID: "2021000000000009", appPrivateKey: key.pemRepresentation,
                    alipayPublicKey: try _RSA.Signing.PrivateKey(keySize: .bits2048).publicKey.pemRepresentation),
                gatewayURL: gateway,
                transport: HTTPClientAlipayTransport(transport: transport),
                retry: .init(attempts: 3, firstDelay: .milliseconds(1), timeout: .seconds(120)), sleep: { _ in })
            await #expect(throws: AlipayGatewayError.self) {
                _ = try await alipay.downloadBill(url: "http://127.0.0.1:\(client.port!)/announced")
            }
            #expect(served.withLock { $0 } == 3)
        }
    }
}
