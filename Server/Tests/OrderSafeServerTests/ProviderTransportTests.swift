import ChannelSupport
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// The real transport every provider and webhook call goes through, against a live loopback server.
@Suite("Provider transport: redirects are answers, never followed")
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
                body: Array("{}".utf8), timeout: .seconds(10))
            #expect(response.status == 302)
        }
        #expect(reached.withLock { $0 }.isEmpty)
    }
}
