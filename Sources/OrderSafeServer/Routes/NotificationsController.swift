import Engine
import Hummingbird
import NIOCore

/// Provider notifications. `POST /v1/notify/alipay` answers the 7 bytes `success` once the notification is
/// stored and applied, `failure` otherwise (Alipay then retries on its schedule).
struct NotificationsController {
    let alipay: AlipayPayments?

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.post("notify/alipay") { request, context in
            guard let alipay else { return Self.text("failure", status: .notFound) }
            var request = request
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: 64 * 1024)
            } catch {
                return Self.text("failure", status: .contentTooLarge)
            }
            let headers = ["content-type": request.headers[.contentType] ?? ""]
            do {
                let reply = try await alipay.handleNotification(body: Array(buffer: body), headers: headers)
                return Self.text(reply.rawValue, status: .ok)
            } catch {
                context.logger.error("alipay notification not stored", metadata: ["error": "\(String(reflecting: error))"])
                return Self.text("failure", status: .internalServerError)
            }
        }
    }

    static func text(_ text: String, status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
