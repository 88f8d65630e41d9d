import ChannelSupport
import Engine
import Hummingbird
import Ledger
import OrderSafeModel

/// One payment channel as the server runs it: its settings section, its built-in simulator, what it adds to a new
/// order's answer, the routes its provider and the app reach it by, and what the shared services (reconciliation,
/// refunds, the inbox sweep, the console) use it for. Each channel is one folder under `Channels/`;
/// ``ChannelRegistry`` lists them, and nothing else names them.
protocol PaymentChannel: Sendable {
    /// The merchant's account with the provider, as configured.
    associatedtype Account: ChannelSettings
    /// The provider's built-in simulator, for a server in sandbox mode.
    associatedtype Simulator: ChannelSimulator where Simulator.Account == Account

    /// The channel's name on the wire and in the ledger.
    static var channel: Channel { get }
    /// The setting that turns the account on; production refuses a catalog selling through a channel without one.
    static var accountKey: String { get }
    /// How the console names the channel, and its colour in the revenue chart.
    static var label: ChannelLabel { get }
    /// The console's words about what only this channel has, by key (templates read them as `{{t.key}}`), in
    /// English and Simplified Chinese; none by default.
    static var consoleTexts: [String: (en: String, zh: String)] { get }
    /// The provider's notification route, under `/v1` (404 while the channel is off).
    static var notificationRoute: String { get }
    /// The path prefix of the channel's routes for signed-in users, if it has any (404 while the channel is off).
    static var userRoutePrefix: String? { get }
    /// The prefix of the idempotency keys the channel makes orders with itself (adopted ones), which apps' keys may
    /// not start with; nil when it makes none.
    static var reservedIdempotencyPrefix: String? { get }
    /// Whether this server's settings can hold its signals for an operator's replay (``heldReplayer``): its routes
    /// `POST /v1/admin/<channel>/held/replay` and the console's are mounted.
    static var holdsSignals: Bool { get }

    /// Reads the channel's settings section; nil when ``accountKey`` is not set.
    static func account(from reader: SettingsReader) throws -> Account?
    /// Reads what its built-in simulator is told (`server.sandbox_<channel>_…`), which the simulator finds in
    /// ``SimulatorSetup/simulatorSettings``; nil (the default) when it is told nothing.
    static func simulatorSettings(from reader: SettingsReader) throws -> (any Sendable)?
    /// How the channel reaches its provider over the network (by default: HTTP, answers up to 16 MiB).
    static func networkTransport() -> any ProviderTransport
    /// The channel over `account`, calling the provider through `transport`; `simulated`: the account is the
    /// built-in simulator's.
    static func start(account: Account, transport: any ProviderTransport, simulated: Bool, wiring: ChannelWiring)
        async throws -> Self

    /// Asks the provider about an unsettled order and closes an unpaid one; nil when its orders settle otherwise.
    var settler: (any OrderSettler)? { get }
    /// Refunds through the provider; nil when the merchant cannot (App Store refunds are Apple's).
    var refunder: (any OrderRefunder)? { get }
    /// Processes stored notifications again; nil when they expire (query the order instead).
    var replayer: (any NotificationReplayer)? { get }
    /// Replays the signals this server's settings held, once an operator fixed them; nil when it holds none.
    var heldReplayer: (any HeldSignalReplayer)? { get }
    /// What it needs done on a schedule.
    var chores: [any ChannelChore] { get }
    /// What it queues for the job runner an item at a time.
    var tasks: [any ChannelTask] { get }
    /// Its provider's daily statement, checked against the ledger; nil when none is read yet.
    var statements: (any StatementSource)? { get }

    /// Adds to the catalog's answer for a signed-in user what the channel offers them: the provider's word on the
    /// introductory offers in `answer.introductoryOffers` (`eligibility` says whose transaction each names), and
    /// other offers. Nothing by default.
    func personalise(
        _ answer: inout CatalogResponse, userID: String,
        eligibility: [(product: CatalogProduct, eligible: Bool, transactionID: String?)]
    ) async throws
    /// Puts into a new order's answer what the app hands the provider's SDK.
    func invoke(_ order: Order, into response: inout OrderResponse) async throws
    /// Adds the provider's notification routes (under `/v1`) and the channel's routes for signed-in users.
    func addRoutes(notifications: RouterGroup<OrderSafeRequestContext>, users: RouterGroup<OrderSafeRequestContext>)
}

extension PaymentChannel {
    static func networkTransport() -> any ProviderTransport { HTTPClientProviderTransport() }
    static var holdsSignals: Bool { false }
    static var consoleTexts: [String: (en: String, zh: String)] { [:] }
    static func simulatorSettings(from reader: SettingsReader) throws -> (any Sendable)? { nil }
    var heldReplayer: (any HeldSignalReplayer)? { nil }

    func personalise(
        _ answer: inout CatalogResponse, userID: String,
        eligibility: [(product: CatalogProduct, eligible: Bool, transactionID: String?)]
    ) async throws {}
}

/// One channel's settings section (`alipay.*`, `wechatpay.*`, `appstore.*`): the merchant's account.
public protocol ChannelSettings: Sendable {}

/// How the console shows a channel.
struct ChannelLabel: Sendable {
    var english: String
    var simplifiedChinese: String
    /// The channel's colour in the revenue chart, as CSS.
    var colour: String

    /// The English name of `channel` (its wire name when it is not built in).
    static func english(_ channel: Channel) -> String {
        ChannelRegistry.builtIn.type(of: channel)?.label.english ?? channel.rawValue
    }
}

/// What every channel is started with: the engine's ledger, catalog, clock and logger, and the order numbers.
struct ChannelWiring: Sendable {
    let context: EngineContext<SQLLedger>
    let identities: OrderIdentityGenerator
    /// The merchant's word on offers (the App Store's), when `offer_hook.url` is set.
    var offerHook: MerchantOfferHook? = nil
}
