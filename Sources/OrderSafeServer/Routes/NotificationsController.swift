import ChannelSupport
import Engine
import HTTPTypes
import Hummingbird
import NIOCore
import OrderSafeModel

/// Provider notifications. `POST /v1/notify/alipay` answers the 7 bytes `success` once the notification is
/// stored and applied, `failure` otherwise (Alipay then retries on its schedule). `POST /v1/notify/wechatpay`
/// answers 204 once stored and applied, otherwise 4xx/5xx with `{"code":"FAIL","message":…}` (WeChat Pay retries).
/// `POST /v1/notify/appstore` (`{"signedPayload": …}`) answers 200 once stored and applied, otherwise an error
/// status with the API's error body (the App Store retries).
struct NotificationsController {
    let alipay: AlipayPayments?
    let wechatpay: WeChatPayPayments?
    let appStore: AppStorePayments?

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.post("notify/appstore") { request, context in
            guard let appStore else { throw APIError.notFound("the App Store is not configured") }
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: 256 * 1024, context: context)
            } catch {
                throw APIError(status: .contentTooLarge, code: "body_too_large", message: "the body exceeds 256 KiB")
            }
            guard body.readableBytes > 0 else {  // nothing to store: no genuine notification is empty
                throw APIError(status: .badRequest, code: "notification_refused", message: "the body is empty")
            }
            let reply: AppStorePayments.Reply
            do {
                reply = try await appStore.handleNotification(body: Array(buffer: body))
            } catch {
                context.logger.error(
                    "appstore notification not stored", metadata: ["error": "\(String(reflecting: error))"])
                throw APIError.unavailable
            }
            switch reply {
            case .accepted: return Response(status: .ok)
            case .refused(let status, let message):
                throw APIError(status: .init(code: status), code: "notification_refused", message: message)
            }
        }
        group.post("notify/alipay") { request, context in
            guard let alipay else { return Self.text("failure", status: .notFound) }
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: 64 * 1024, context: context)
            } catch {
                return Self.text("failure", status: .contentTooLarge)
            }
            guard body.readableBytes > 0 else { return Self.text("failure", status: .badRequest) }  // nothing to store
            guard let headers = Self.keptHeaders(request, ["content-type"]) else {
                return Self.text("failure", status: .badRequest)
            }
            do {
                let reply = try await alipay.handleNotification(body: Array(buffer: body), headers: headers)
                return Self.text(reply.rawValue, status: .ok)
            } catch {
                context.logger.error(
                    "alipay notification not stored", metadata: ["error": "\(String(reflecting: error))"])
                return Self.text("failure", status: .internalServerError)
            }
        }
        group.post("notify/wechatpay") { request, context in
            guard let wechatpay else { return Self.wechatpayFailure("WeChat Pay is not configured", status: 404) }
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: 64 * 1024, context: context)
            } catch {
                return Self.wechatpayFailure("body too large", status: 413)
            }
            guard body.readableBytes > 0 else { return Self.wechatpayFailure("the body is empty", status: 400) }
            guard let headers = Self.keptHeaders(request, ["content-type"] + WeChatPayPayments.signatureHeaders) else {
                return Self.wechatpayFailure("a header is longer than \(Self.maxHeaderBytes) bytes", status: 400)
            }
            do {
                switch try await wechatpay.handleNotification(headers: headers, body: Array(buffer: body)) {
                case .accepted: return Response(status: .noContent)
                case .refused(let status, let message): return Self.wechatpayFailure(message, status: status)
                }
            } catch {
                context.logger.error(
                    "wechatpay notification not stored", metadata: ["error": "\(String(reflecting: error))"])
                return Self.wechatpayFailure("not stored, retry later", status: 500)
            }
        }
    }

    /// The longest header value a provider notification is kept with: every header a provider signs or sends is far
    /// shorter (a WeChat Pay signature by a 4096-bit key is 684 bytes of base64).
    static let maxHeaderBytes = 1024

    /// The headers of `names` a notification is verified and stored with (a missing content type as empty); nil when
    /// one is longer than ``maxHeaderBytes``: such a request is refused before it is stored, so nobody can make the
    /// inbox keep what they like.
    static func keptHeaders(_ request: Request, _ names: [String]) -> [String: String]? {
        var kept: [String: String] = [:]
        for name in names {
            guard let field = HTTPField.Name(name) else { continue }
            let value = request.headers[field]
            if let value, value.utf8.count > maxHeaderBytes { return nil }
            if let value { kept[name] = value } else if field == .contentType { kept[name] = "" }
        }
        return kept
    }

    static func wechatpayFailure(_ message: String, status: Int) -> Response {
        let body = #"{"code":"FAIL","message":\#(JSONString.encode(PublicMessage.clean(message)))}"#
        return Response(
            status: .init(code: status), headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func text(_ text: String, status: HTTPResponse.Status) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
