import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// Under fire: forged notifications and oversized bodies from anyone while real purchases go on.
@Suite("Flood: forged and oversized traffic leaves real purchases settled and the inbox bounded")
struct FloodTests {
    static let forgedPerChannel = 120
    static let purchases = 24

    @Test("forged WeChat Pay, App Store and Alipay notifications and oversized bodies, beside real App Store purchases")
    func flood() async throws {
        try await TestServer.withComponents { client, components, _ in
            let store = components.sandbox!.appStore
            let filler = String(repeating: "A", count: 200_000)
            let started = ContinuousClock.now
            let (statuses, results) = try await withThrowingTaskGroup(of: ([Int], [AppStoreTransactionResult]).self) {
                group in
                group.addTask {
                    var statuses: [Int] = []
                    for index in 0..<Self.forgedPerChannel {
                        let wechat = try await client.execute(
                            uri: "/v1/notify/wechatpay", method: .post,
                            headers: [
                                HTTPField.Name("Wechatpay-Timestamp")!: "\(Int(TestServer.now.timeIntervalSince1970))",
                                HTTPField.Name("Wechatpay-Nonce")!: "n\(index)",
                                HTTPField.Name("Wechatpay-Signature")!: "c2ln",
                                HTTPField.Name("Wechatpay-Serial")!: "PUB_KEY_ID_0", .contentType: "application/json",
                            ],
                            body: ByteBuffer(string: #"{"id":"\#(index)","pad":"\#(filler)"}"#))
                        let apple = try await client.execute(
                            uri: "/v1/notify/appstore", method: .post, headers: [.contentType: "application/json"],
                            body: ByteBuffer(string: #"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.\#(filler).\#(index)"}"#))
                        let alipay = try await client.execute(
                            uri: "/v1/notify/alipay", method: .post,
                            headers: [.contentType: "application/x-www-form-urlencoded"],
                            body: ByteBuffer(string: "notify_id=\(index)&sign=Zm9yZ2Vk&pad=\(filler)"))
                        let oversized = try await client.execute(
                            uri: "/v1/notify/appstore", method: .post, headers: [.contentType: "application/json"],
                            body: ByteBuffer(string: String(repeating: "B", count: 300_000)))
                        statuses += [wechat.status.code, apple.status.code, oversized.status.code]
                        #expect(String(buffer: alipay.body) == "failure")
                    }
                    return (statuses, [])
                }
                group.addTask {
                    var results: [AppStoreTransactionResult] = []
                    for index in 0..<Self.purchases {
                        let token = try await TestServer.token("buyer\(index)")
                        let order = try await TestServer.createOrder(client, token: token).decoded(OrderResponse.self)
                            .order
                        let (_, jws) = try await store.purchase(
                            productID: AppStoreFlowTests.coins, appAccountToken: order.orderUUID)
                        results.append(try await AppStoreFlowTests.submit(client, token: token, jws: jws))
                    }
                    return ([], results)
                }
                var statuses: [Int] = []
                var results: [AppStoreTransactionResult] = []
                for try await (s, r) in group {
                    statuses += s
                    results += r
                }
                return (statuses, results)
            }
            let elapsed = ContinuousClock.now - started
            #expect(results.count == Self.purchases && results.allSatisfy { $0.verdict == .recorded })
            #expect(statuses.allSatisfy { (400..<500).contains($0) }, "\(Set(statuses))")
            let footprint = try await components.ledger.inboxFootprint()
            // Every forged body is cut to its first 512 bytes once refused; only the real submissions keep theirs.
            let bound = Int64(3 * Self.forgedPerChannel * 600 + Self.purchases * 8_000)
            #expect(
                footprint.bodyBytes < bound, "inbox holds \(footprint.bodyBytes) bytes in \(footprint.entries) entries")
            print(
                "flood: \(3 * Self.forgedPerChannel) forged notifications and \(Self.forgedPerChannel) oversized bodies beside "
                    + "\(Self.purchases) purchases in \(elapsed): \(results.count) recorded, inbox \(footprint.entries) entries, "
                    + "\(footprint.bodyBytes) body bytes (forged bodies sent: \(3 * Self.forgedPerChannel * 200_000) bytes)"
            )
        }
    }

    @Test(
        "notifications with headers longer than any provider sends are refused before they are stored: the inbox does not grow"
    )
    func hugeHeaders() async throws {
        try await TestServer.withComponents { client, components, _ in
            let before = try await components.ledger.inboxFootprint()
            let parameter = "application/x-www-form-urlencoded; x=" + String(repeating: "A", count: 75_000)
            for index in 0..<300 {
                let alipay = try await client.execute(
                    uri: "/v1/notify/alipay", method: .post, headers: [.contentType: parameter],
                    body: ByteBuffer(string: "a=\(index)"))
                #expect(alipay.status == .badRequest && String(buffer: alipay.body) == "failure")
                let wechat = try await client.execute(
                    uri: "/v1/notify/wechatpay", method: .post,
                    headers: [
                        HTTPField.Name("Wechatpay-Nonce")!: String(repeating: "n", count: 75_000),
                        .contentType: "application/json",
                    ],
                    body: ByteBuffer(string: #"{"id":"\#(index)"}"#))
                #expect(wechat.status == .badRequest)
            }
            let after = try await components.ledger.inboxFootprint()
            #expect(
                after.entries == before.entries && after.headerBytes == before.headerBytes,
                "300 hostile requests per channel grew the inbox by \(after.headerBytes - before.headerBytes) header bytes"
            )
            // A genuine-looking refused notification is still kept (bounded), with its headers as sent.
            let forged = try await client.execute(
                uri: "/v1/notify/alipay", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded; charset=utf-8"],
                body: ByteBuffer(string: "notify_id=1&sign=Zm9yZ2Vk"))
            #expect(String(buffer: forged.body) == "failure")
            let kept = try await components.ledger.inboxFootprint()
            #expect(kept.entries == before.entries + 1 && kept.headerBytes - before.headerBytes < 200)
        }
    }

    @Test(
        "an app user repeating client-result thousands of times grows the order's history by a bounded number of events"
    )
    func clientResultFlood() async throws {
        try await TestServer.withComponents { client, components, _ in
            let alice = try await TestServer.token("alice")
            let order = try await TestServer.createOrder(
                client, token: alice, product: "gift_box", channel: "wechatpay"
            )
            .decoded(OrderResponse.self).order
            for index in 0..<2_000 {
                let result = index % 3 == 0 ? "success" : (index % 3 == 1 ? "pending" : "failed")
                let hint = try await client.execute(
                    uri: "/v1/orders/\(order.orderNo)/client-result", method: .post, headers: TestServer.bearer(alice),
                    body: TestServer.json(#"{"result":"\#(result)","detail":"\#(String(repeating: "d", count: 180))"}"#)
                )
                #expect(hint.status == .ok, "hint \(index): \(hint.status)")
            }
            let dossier = try #require(try await components.ledger.dossier(orderNo: order.orderNo))
            #expect(dossier.eventCount <= 25, "2,000 hints left \(dossier.eventCount) events")
            let admin = try await client.execute(
                uri: "/v1/admin/orders/\(order.orderNo)", method: .get, headers: TestServer.bearer(TestServer.adminKey))
            #expect(
                admin.status == .ok && admin.body.readableBytes < 20_000,
                "admin order: \(admin.body.readableBytes) bytes")
            print(
                "client-result flood: 2,000 hints → \(dossier.eventCount) events, admin page \(admin.body.readableBytes) bytes"
            )
        }
    }

    @Test("an order's history is paged: the admin API and the console show 200 events a page however many there are")
    func eventPages() async throws {
        try await ConsoleTests.withConsole { browser, components, clock, token in
            let order = try await TestServer.createOrder(browser.client, token: token).decoded(OrderResponse.self).order
            for index in 0..<450 {
                try await components.ledger.note(
                    orderNo: order.orderNo, kind: OrderEventKind(rawValue: "n\(index)"), cause: .system, evidence: nil,
                    at: clock.now())
            }
            struct Page: Decodable {
                var events: [Event]
                var events_total: Int
                var events_from: Int
                struct Event: Decodable { var kind: String }
            }
            func page(_ query: String) async throws -> TestResponse {
                try await browser.client.execute(
                    uri: "/v1/admin/orders/\(order.orderNo)\(query)", method: .get,
                    headers: TestServer.bearer(TestServer.adminKey))
            }
            let first = try await page("").decoded(Page.self)
            #expect(first.events.count == 200 && first.events_total == 451 && first.events_from == 0)
            let last = try await page("?events_from=400").decoded(Page.self)
            #expect(last.events.count == 51, "\(last.events.count)")
            #expect(last.events.last?.kind == "n449" && last.events_from == 400)
            for bad in [
                "?events_from=7", "?events_from=-200", "?events_from=200&events_from=400", "?page=2",
                "?events_from=1e3",
            ] {
                let refused = try await page(bad)
                #expect(
                    try refused.status == .badRequest && refused.errorCode() == "invalid_parameter",
                    "\(bad): \(refused.status)")
            }
            try await browser.signIn(TestServer.adminKey)
            let console = try await browser.get("/admin/orders/\(order.orderNo)")
            #expect(console.status == .ok && console.html.components(separatedBy: "<li class=\"event").count - 1 == 200)
            #expect(console.html.contains("Events 1–200 of 451") && console.html.contains("?events_from=200"))
            let later = try await browser.get("/admin/orders/\(order.orderNo)?events_from=400")
            #expect(
                later.html.contains("n449") && later.html.contains("?events_from=200")
                    && !later.html.contains("id=\"events-later\""))
        }
    }

    @Test(
        "one user may hold a bounded number of unpaid orders; a retry of one of them, a cancelled one, or a day later frees the way"
    )
    func unpaidOrders() async throws {
        try await TestServer.withComponents(extra: ["ORDERSAFE_LIMITS_UNPAID_ORDERS_PER_USER": "30"]) {
            client, _, clock in
            let alice = try await TestServer.token("alice", lifetime: 3 * 86400)
            let bob = try await TestServer.token("bob")
            func create(_ token: String, key: String) async throws -> TestResponse {
                var headers = TestServer.bearer(token)
                headers[HTTPField.Name("Idempotency-Key")!] = key
                return try await client.execute(
                    uri: "/v1/orders", method: .post, headers: headers,
                    body: TestServer.json(#"{"product_id":"gift_box","channel":"wechatpay"}"#))
            }
            var statuses: [HTTPResponse.Status] = []
            for index in 0..<300 { statuses.append(try await create(alice, key: "k\(index)").status) }
            #expect(
                statuses.prefix(30).allSatisfy { $0 == .created }
                    && statuses.dropFirst(30).allSatisfy { $0 == .conflict })
            let refused = try await create(alice, key: "another")
            #expect(try refused.errorCode() == "too_many_unpaid_orders")
            #expect(try await create(alice, key: "k0").status == .ok, "a retry of an order already made gets it")
            #expect(try await create(bob, key: "k0").status == .created, "another user is not limited")
            let first = try await create(alice, key: "k1").decoded(OrderResponse.self).order
            let cancel = try await client.execute(
                uri: "/v1/orders/\(first.orderNo)/cancel", method: .post, headers: TestServer.bearer(alice))
            #expect(cancel.status == .ok)
            #expect(try await create(alice, key: "after-cancel").status == .created)
            clock.advance(by: 24 * 3600 + 1)
            #expect(try await create(alice, key: "next-day").status == .created)
        }
    }

    @Test(
        "1,100 idle connections from one client hold at most its cap open, and a health probe from the same address still answers"
    )
    func idleConnections() async throws {
        let extra = [
            // Idle connections time out after ten minutes, past the wait below: only the cap closes them here.
            "ORDERSAFE_SERVER_IDLE_TIMEOUT_SECONDS": "600", "ORDERSAFE_SERVER_MAX_CONNECTIONS_PER_ADDRESS": "64",
        ]
        try await RequestLimitTests.withLiveServer(extra: extra, connectFirst: true) { port in
            let flood = try (0..<1_100).map { _ in try RawConnection(port: port) }
            var open = flood.count
            _ = try await eventually(within: .seconds(120), every: .milliseconds(100)) {
                open = flood.filter { !$0.isClosedNow() }.count
                return open <= 64
            }
            #expect(open <= 64, "\(open) of 1,100 idle connections still open")
            let started = ContinuousClock.now
            let probe = try RawConnection(port: port)
            #expect(probe.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"))
            let answer = probe.receive()
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(100))")
            print(
                "idle connections: 1,100 opened, \(open) kept open; /healthz answered in \(ContinuousClock.now - started)"
            )
        }
    }
}
