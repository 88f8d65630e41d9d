import Alipay
import ChannelSupport
import Engine
import Hummingbird
import NIOCore
import OrderSafeModel
import Sandbox

/// Alipay (`alipay.trade.app.pay`): a new order's answer carries the signed order string for the Alipay SDK;
/// `POST /v1/notify/alipay` answers the 7 bytes `success` once the notification is stored and applied, `failure`
/// otherwise (Alipay then retries on its schedule); unsettled orders are queried and unpaid ones closed; refunds go
/// through the gateway; stored notifications can be replayed.
struct AlipayChannel: PaymentChannel {
    typealias Simulator = AlipaySimulator

    let payments: AlipayPayments

    static let channel = Channel.alipay
    static let accountKey = "alipay.app_id"
    static let label = ChannelLabel(english: "Alipay", simplifiedChinese: "支付宝", colour: "#1677ff")
    static let notificationRoute = "notify/alipay"
    static let userRoutePrefix: String? = nil
    static let reservedIdempotencyPrefix: String? = nil

    static func account(from reader: SettingsReader) throws -> Settings.Alipay? { try reader.alipay() }

    /// Bills (zips) up to 256 MiB; the gateway client refuses a gateway answer over 1 MiB itself.
    static func networkTransport() -> any ProviderTransport { HTTPClientProviderTransport(maxResponseBytes: 256 << 20) }

    static func start(
        account: Settings.Alipay, transport: any ProviderTransport, simulated: Bool, wiring: ChannelWiring
    ) async throws -> AlipayChannel {
        let credentials = try account.credentials()
        let (clock, logger) = (wiring.context.clock, wiring.context.logger)
        return AlipayChannel(
            payments: AlipayPayments(
                credentials: credentials,
                gateway: AlipayGatewayClient(
                    credentials: credentials, gatewayURL: account.gatewayURL,
                    transport: HTTPClientAlipayTransport(transport: transport), clock: clock, logger: logger),
                sellerID: account.sellerID, notifyURL: account.notifyURL, context: wiring.context.narrowed { $0 },
                sandbox: simulated || account.isAlipaySandbox))
    }

    var settler: (any OrderSettler)? { payments }
    var refunder: (any OrderRefunder)? { payments }
    var replayer: (any NotificationReplayer)? { payments }
    var chores: [any ChannelChore] { [] }
    var tasks: [any ChannelTask] { [] }
    var statements: (any StatementSource)? { payments }

    func invoke(_ order: Order, into response: inout OrderResponse) async throws {
        response.alipay = try payments.invocation(for: order)
    }

    func addRoutes(notifications: RouterGroup<OrderSafeRequestContext>, users: RouterGroup<OrderSafeRequestContext>) {
        notifications.post(RouterPath(Self.notificationRoute)) { request, context in
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: 64 * 1024)
            } catch {
                return ProviderNotification.text("failure", status: .contentTooLarge)
            }
            guard body.readableBytes > 0 else {  // nothing to store
                return ProviderNotification.text("failure", status: .badRequest)
            }
            guard let headers = ProviderNotification.keptHeaders(request, ["content-type"]) else {
                return ProviderNotification.text("failure", status: .badRequest)
            }
            do {
                let reply = try await payments.handleNotification(body: Array(buffer: body), headers: headers)
                return ProviderNotification.text(reply.rawValue, status: .ok)
            } catch {
                context.logger.error(
                    "alipay notification not stored", metadata: ["error": "\(String(reflecting: error))"])
                return ProviderNotification.text("failure", status: .internalServerError)
            }
        }
    }
}

extension OrderSafeComponents {
    /// The Alipay channel, when this server has it.
    var alipay: AlipayPayments? { channels.running(AlipayChannel.self)?.payments }
}
