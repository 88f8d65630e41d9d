import ChannelSupport
import Foundation
import HTTPTypes
import Hummingbird
import OrderSafeModel

/// The sandbox App Store over HTTP: the App Store Server API under `{prefix}/inApps/…` and `verifyReceipt` under
/// `{prefix}/production/verifyReceipt` and `{prefix}/sandbox/verifyReceipt`, as the real hosts serve them, and the
/// authority's OCSP responder at `{prefix}/ocsp`; plus
/// `POST {prefix}/purchase` (what StoreKit returns after a purchase; `subscription_period` such as `P1M` for an
/// auto-renewable subscription), `POST {prefix}/subscriptions/{original_transaction_id}/events` (what a subscriber or
/// the App Store's billing does between renewals: `event` = `auto_renew_on|auto_renew_off`, `renews_to`
/// [`product_id`], `upgrade` [`product_id`], `fails_next_billing` [`grace_days`], `recovers_billing`, `refund`, and
/// at a period's end `billing_fails` [`grace_days`] and `expires`; answers the notification Apple would send, which
/// the notification history keeps), `POST {prefix}/billing/run` (the App Store's billing run now: renewals, billing
/// failures, grace ends and expiries of every subscription whose period ended; answers their notifications),
/// `GET {prefix}/receipt` (the app receipt) and `POST {prefix}/faults`.
public struct SandboxAppStoreRoutes<Context: RequestContext>: Sendable {
    let store: SandboxAppStore

    public init(store: SandboxAppStore) {
        self.store = store
    }

    /// The Apple endpoints the sandbox serves.
    public static var appleRoutes: [(method: HTTPRequest.Method, path: String)] {
        [
            (.post, "production/verifyReceipt"), (.post, "sandbox/verifyReceipt"),
            (.get, "inApps/v1/transactions/:transaction_id"), (.get, "inApps/v2/history/:transaction_id"),
            (.get, "inApps/v2/refund/lookup/:transaction_id"), (.get, "inApps/v1/lookup/:order_id"),
            (.put, "inApps/v1/transactions/consumption/:transaction_id"), (.post, "inApps/v1/notifications/history"),
            (.post, "inApps/v1/notifications/test"), (.get, "inApps/v1/notifications/test/:token"), (.post, "ocsp"),
        ]
    }

    public func addRoutes(to group: RouterGroup<Context>) {
        let handler = store.transport.handler
        for (method, path) in Self.appleRoutes {
            group.on(RouterPath(path), method: method) { request, _ in
                try await SimulatorBridge.forward(request, limit: 1 << 20, to: handler)
            }
        }
        group.post("purchase") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 16 * 1024)
            do {
                let object = try JSONObject(Array(buffer: body))
                let token = try object.optionalString("app_account_token").flatMap(UUID.init(uuidString:))
                let period = try object.optionalString("subscription_period").map { text in
                    guard let period = GrantPeriod(iso8601: text) else { throw SandboxAppStoreError.badPeriod(text) }
                    return period
                }
                let (id, signed) = try await store.purchase(
                    productID: try object.string("product_id"), type: try object.optionalString("type") ?? "Consumable",
                    appAccountToken: token,
                    subscriptionPeriod: period)
                return SandboxJSON.response(["transaction_id": id, "signed_transaction": signed], status: .ok)
            } catch {
                return SandboxJSON.response(["error": "\(error)"], status: .badRequest)
            }
        }
        group.post("subscriptions/:original_transaction_id/events") { request, context in
            try await SandboxJSONObject.handle(request, context: context) { object in
                let original = try context.parameters.require("original_transaction_id")
                let event: SandboxAppStore.SubscriptionEvent
                let graceDays = Int(clamping: try object.optionalInt("grace_days") ?? 0)
                switch try object.string("event") {
                case "auto_renew_on": event = .autoRenew(true)
                case "auto_renew_off": event = .autoRenew(false)
                case "renews_to": event = .renewsTo(try object.string("product_id"))
                case "billing_fails": event = .billingFails(graceDays: graceDays)
                case "expires": event = .expires
                case "fails_next_billing":
                    try await store.failNextBilling(original, graceDays: graceDays)
                    return [:]
                case "recovers_billing": return ["signed_payload": try await store.recoverBilling(original)]
                case "upgrade":
                    return ["signed_payload": try await store.upgrade(original, to: try object.string("product_id"))]
                case "refund":
                    guard let latest = try await store.latestTransaction(of: original) else {
                        throw SandboxAppStoreError.unknownTransaction(original)
                    }
                    try await store.refund(transactionID: latest)
                    return ["signed_payload": await store.latestNotification ?? ""]
                case let other: throw SandboxAppStoreError.badEvent(other)
                }
                return ["signed_payload": try await store.subscription(original, event)]
            }
        }
        group.post("billing/run") { _, _ in
            do {
                return SandboxJSONObject.response(["signed_payloads": try await store.renewDue()])
            } catch {
                return SandboxJSON.response(["error": "\(error)"], status: .badRequest)
            }
        }
        group.get("receipt") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: try await store.appReceipt())))
        }
        group.post("faults") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 16 * 1024)
            do {
                let request = try SandboxJSON.decode(AppStoreFaultRequest.self, from: Array(buffer: body))
                let faults = try request.parsed()
                if let state = try request.serverAPIState() { await store.setServerAPI(state) }
                for fault in faults { await store.inject(fault) }
                return SandboxJSON.response(["queued": "\(faults.count)"], status: .ok)
            } catch {
                return SandboxJSON.response(["error": "\(error)"], status: .badRequest)
            }
        }
    }
}

/// Body of `POST /sandbox/appstore/faults`: `{"faults": ["server_error", "rate_limited:30", "timeout_ms:3000",
/// "expired_leaf", "revoked_leaf", "ocsp_unavailable", "receipt_server_unavailable"]}`, applied in order to the next
/// calls; `server_api:up`, `server_api:unreachable` and `server_api:slow_ms:N` set how every call is answered from now
/// on (the last one given wins).
struct AppStoreFaultRequest: SandboxBody {
    static let members: Set<String> = ["faults"]

    var faults: [String]

    static func seconds(_ digits: Substring, text: String) throws -> Int {
        guard let seconds = Int(digits), (0...3600).contains(seconds) else {
            throw FaultText.Unknown(text: text, known: known)
        }
        return seconds
    }

    static let known =
        "faults take server_error, rate_limited:SECONDS, timeout_ms:N, expired_leaf, revoked_leaf, ocsp_unavailable, receipt_server_unavailable, server_api:up|unreachable|slow_ms:N"

    /// The faults for the next calls, in order (the `server_api:` states are not among them).
    func parsed() throws -> [SandboxAppStore.Fault] {
        try faults.filter { !$0.hasPrefix(Self.serverAPI) }.map { text in
            switch text {
            case "server_error": .serverError
            case "expired_leaf": .expiredLeaf
            case "revoked_leaf": .revokedLeaf
            case "ocsp_unavailable": .ocspUnavailable
            case "receipt_server_unavailable": .receiptServerUnavailable
            case _ where text.hasPrefix("rate_limited:"):
                .rateLimited(retryAfterSeconds: try Self.seconds(text.dropFirst("rate_limited:".count), text: text))
            default: .timeout(try FaultText.milliseconds(text, prefix: "timeout_ms:", known: Self.known))
            }
        }
    }

    static let serverAPI = "server_api:"

    /// The Server API's state the last `server_api:` entry sets; nil when none does.
    func serverAPIState() throws -> SandboxAppStore.ServerAPIState? {
        guard let text = faults.last(where: { $0.hasPrefix(Self.serverAPI) }) else { return nil }
        switch text.dropFirst(Self.serverAPI.count) {
        case "up": return .up
        case "unreachable": return .unreachable
        default:
            let slow = String(text.dropFirst(Self.serverAPI.count))
            return .slow(try FaultText.milliseconds(slow, prefix: "slow_ms:", known: Self.known))
        }
    }
}
