import ChannelSupport
import Engine
import Hummingbird
import NIOCore
import OrderSafeModel
import Sandbox
import WeChatPay

/// WeChat Pay (API v3, APP payment): a new order is prepaid and its answer carries the signed `PayReq` parameters;
/// `POST /v1/notify/wechatpay` answers 204 once the notification is stored and applied, otherwise 4xx/5xx with
/// `{"code":"FAIL","message":…}` (WeChat Pay retries). Unsettled orders are queried and unpaid ones closed; refunds go
/// through the API; stored notifications are not replayed (their signed timestamps expire: the order is queried).
struct WeChatPayChannel: PaymentChannel {
    typealias Simulator = WeChatPaySimulator

    let payments: WeChatPayPayments

    static let channel = Channel.wechatPay
    static let accountKey = "wechatpay.mch_id"
    static let label = ChannelLabel(english: "WeChat Pay", simplifiedChinese: "微信支付", colour: "#07c160")
    static let notificationRoute = "notify/wechatpay"
    static let userRoutePrefix: String? = nil
    static let reservedIdempotencyPrefix: String? = nil

    static func account(from reader: SettingsReader) throws -> Settings.WeChatPay? { try reader.wechatpay() }

    /// How the built-in WeChat Pay signs its answers and notifications (`server.sandbox_wechatpay_signing`): with its
    /// public key by default, or with platform certificates, for a merchant SDK set up that way.
    static func simulatorSettings(from reader: SettingsReader) throws -> (any Sendable)? {
        let signing: SandboxWeChatPaySigning = try reader.choice(
            "server.sandbox_wechatpay_signing", default: .publicKey)
        return signing
    }

    static func start(
        account: Settings.WeChatPay, transport: any ProviderTransport, simulated: Bool, wiring: ChannelWiring
    ) async throws -> WeChatPayChannel {
        WeChatPayChannel(
            payments: try account.payments(
                transport: transport, context: wiring.context.narrowed { $0 }, sandbox: simulated))
    }

    var settler: (any OrderSettler)? { payments }
    var refunder: (any OrderRefunder)? { payments }
    var replayer: (any NotificationReplayer)? { nil }
    var chores: [any ChannelChore] { [] }
    var tasks: [any ChannelTask] { [] }
    var statements: (any StatementSource)? { payments }

    /// WeChat Pay must be reached to prepay; when it cannot be, the order stays and the app may retry (the same
    /// `Idempotency-Key` returns the same order and prepays it again).
    func invoke(_ order: Order, into response: inout OrderResponse) async throws {
        do {
            response.wechatpay = try await payments.invocation(for: order)
        } catch let error as WeChatPayAPIError where error.isRetryable {
            throw APIError(
                status: .serviceUnavailable, code: "provider_unavailable",
                message: "WeChat Pay is unreachable, retry: \(error)")
        } catch let error as WeChatPayAPIError {
            throw APIError(status: .badGateway, code: "provider_error", message: "\(error)")
        }
    }

    func addRoutes(notifications: RouterGroup<OrderSafeRequestContext>, users: RouterGroup<OrderSafeRequestContext>) {
        notifications.post(RouterPath(Self.notificationRoute)) { request, context in
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: 64 * 1024)
            } catch {
                return Self.failure("body too large", status: 413)
            }
            guard body.readableBytes > 0 else { return Self.failure("the body is empty", status: 400) }
            guard
                let headers = ProviderNotification.keptHeaders(
                    request, ["content-type"] + WeChatPayPayments.signatureHeaders)
            else {
                return Self.failure("a header is longer than \(ProviderNotification.maxHeaderBytes) bytes", status: 400)
            }
            do {
                switch try await payments.handleNotification(headers: headers, body: Array(buffer: body)) {
                case .accepted: return Response(status: .noContent)
                case .refused(let status, let message): return Self.failure(message, status: status)
                }
            } catch {
                context.logger.error(
                    "wechatpay notification not stored", metadata: ["error": "\(String(reflecting: error))"])
                return Self.failure("not stored, retry later", status: 500)
            }
        }
    }

    /// WeChat Pay's failure answer: `{"code":"FAIL","message":…}`.
    static func failure(_ message: String, status: Int) -> Response {
        let body = #"{"code":"FAIL","message":\#(JSONString.encode(PublicMessage.clean(message)))}"#
        return Response(
            status: .init(code: status), headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

extension OrderSafeComponents {
    /// The WeChat Pay channel, when this server has it.
    var wechatpay: WeChatPayPayments? { channels.running(WeChatPayChannel.self)?.payments }
}
