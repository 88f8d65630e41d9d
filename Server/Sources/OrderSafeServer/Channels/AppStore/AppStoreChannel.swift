import ChannelSupport
import Engine
import Hummingbird
import NIOCore
import OrderSafeModel

/// Apple in-app purchase: the app submits signed transactions and receipts (`POST /v1/appstore/transactions`,
/// `/v1/appstore/sync`); `POST /v1/notify/appstore` (`{"signedPayload": …}`) answers 200 once stored and applied,
/// otherwise an error status with the API's error body (the App Store retries). Orders are settled by Apple's
/// notifications and the notification history (pulled hourly), never by a query; refunds are Apple's; stored
/// notifications can be replayed.
struct AppStoreChannel: PaymentChannel {
    typealias Simulator = AppStoreSimulator

    let payments: AppStorePayments

    static let channel = Channel.appStore
    static let accountKey = "appstore.bundle_id"
    static let label = ChannelLabel(english: "App Store", simplifiedChinese: "App Store", colour: "#8e44ad")
    static let notificationRoute = "notify/appstore"
    static let userRoutePrefix: String? = "/v1/appstore/"
    static let reservedIdempotencyPrefix: String? = AppStorePayments.adoptionKeyPrefix
    static let holdsSignals = true

    static func account(from reader: SettingsReader) throws -> Settings.AppStore? { try reader.appStore() }

    static func start(
        account: Settings.AppStore, transport: any ProviderTransport, simulated: Bool, wiring: ChannelWiring
    ) async throws -> AppStoreChannel {
        if wiring.identities.accountTags == nil {
            wiring.context.logger.warning(
                "no recovery.key: App Store order tokens name nobody, so a ledger restored from a backup cannot tell whose an order it lost was (docs/production.md, Backups and restore)"
            )
        }
        return AppStoreChannel(
            payments: try await account.payments(
                transport: transport, identities: wiring.identities, offerHook: wiring.offerHook,
                context: wiring.context.narrowed { $0 }))
    }

    var settler: (any OrderSettler)? { nil }
    var refunder: (any OrderRefunder)? { nil }
    var replayer: (any NotificationReplayer)? { payments }
    var heldReplayer: (any HeldSignalReplayer)? { payments }
    var chores: [any ChannelChore] { payments.chores }
    var tasks: [any ChannelTask] { payments.tasks }
    var statements: (any StatementSource)? { payments.statementSource }

    /// Signs each introductory offer's eligibility for StoreKit (iOS 18.4) and lists the promotional and win-back
    /// offers the user may have now.
    func personalise(
        _ answer: inout CatalogResponse, userID: String,
        eligibility: [(product: CatalogProduct, eligible: Bool, transactionID: String?)]
    ) async throws {
        for entry in eligibility {
            guard let transactionID = entry.transactionID, let appStoreID = entry.product.appStoreProductID,
                let index = answer.introductoryOffers?.firstIndex(where: { $0.productID == entry.product.id })
            else { continue }
            answer.introductoryOffers?[index].signedEligibility = await payments.signedEligibility(
                productID: appStoreID, eligible: entry.eligible, transactionID: transactionID)
        }
        answer.offers = try await payments.availableOffers(userID: userID)
    }

    /// The app buys through StoreKit with the order's token: nothing more to hand it.
    func invoke(_ order: Order, into response: inout OrderResponse) async throws {}

    func addRoutes(notifications: RouterGroup<OrderSafeRequestContext>, users: RouterGroup<OrderSafeRequestContext>) {
        notifications.post(RouterPath(Self.notificationRoute)) { request, context in
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: 256 * 1024)
            } catch {
                throw APIError(status: .contentTooLarge, code: "body_too_large", message: "the body exceeds 256 KiB")
            }
            guard body.readableBytes > 0 else {  // nothing to store: no genuine notification is empty
                throw APIError(status: .badRequest, code: "notification_refused", message: "the body is empty")
            }
            let reply: AppStorePayments.Reply
            do {
                reply = try await payments.handleNotification(body: Array(buffer: body))
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
        AppStoreController(payments: payments).addRoutes(to: users)
    }
}

extension OrderSafeComponents {
    /// The App Store channel, when this server has it.
    var appStore: AppStorePayments? { channels.running(AppStoreChannel.self)?.payments }
}
