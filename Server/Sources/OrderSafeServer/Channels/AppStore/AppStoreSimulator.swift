import ChannelSupport
import Crypto
import Foundation
import Hummingbird
import Logging
import OrderSafeModel
import Sandbox
import ServiceLifecycle

/// The built-in App Store: its signing authority and receipt signer, the App Store Server API under
/// `/sandbox/appstore`, and the per-device StoreKit queues that `StoreKitStandIn` and `ordersafe-device` talk to.
/// Its roots are written to `data/sandbox/appstore-root.der` (signed data) and `appstore-receipt-root.der`
/// (receipts) for `ordersafe appstore verify|receipt --root`.
struct AppStoreSimulator: ChannelSimulator {
    static let bundleID = "com.example.ordersafe"
    static let keyID = "SANDBOXKEY1"
    static let appAppleID: Int64 = 1_234_567_890

    let store: SandboxAppStore
    let devices: SandboxAppStoreDevices
    let account: Settings.AppStore
    /// Where the App Store posts its notifications to this server.
    let notificationURL: String

    init(_ setup: SimulatorSetup) throws {
        let authority = try SandboxAppStoreCA.loadOrCreate(in: setup.folder, now: setup.clock.now())
        let receipts = try SandboxReceiptSigner.loadOrCreate(in: setup.folder, now: setup.clock.now())
        let rootFile = setup.folder.appendingPathComponent("appstore-root.der")
        let receiptRootFile = setup.folder.appendingPathComponent("appstore-receipt-root.der")
        try Data(authority.rootDER).write(to: rootFile, options: .atomic)
        try Data(receipts.rootDER).write(to: receiptRootFile, options: .atomic)
        let apiKey = try setup.p256Key("appstore-api-key.pem")
        var account = Settings.AppStore(
            bundleID: Self.bundleID, appAppleID: Self.appAppleID, environment: .sandbox,
            rootCertificateFiles: [rootFile.path], receiptRootCertificateFiles: [receiptRootFile.path],
            api: .init(
                signingKey: apiKey.pemRepresentation, keyID: Self.keyID, issuerID: "sandbox-issuer",
                baseURL: "http://sandbox.ordersafe.invalid/sandbox/appstore"))
        account.answersConsumptionRequests = true  // the sandbox's users consent
        self.account = account
        store = try SandboxAppStore(
            authority: authority, receipts: receipts, bundleID: Self.bundleID, appAppleID: Self.appAppleID,
            merchantKeyID: Self.keyID, merchantKey: apiKey.publicKey, clock: setup.clock,
            renewalRate: setup.renewalRate, folder: setup.journalFolder)
        notificationURL = setup.base + "/v1/notify/appstore"
        devices = try SandboxAppStoreDevices(store: store, folder: setup.journalFolder)
    }

    /// Each device's StoreKit queue rebuilt from its journal.
    var transport: any ProviderTransport { store.transport }

    func resume() async throws { try await devices.restore() }

    /// Beside a listening server the App Store posts its notifications to it (once each, as Apple's sandbox) and
    /// bills its subscriptions every five seconds: renewals, billing failures, grace ends and expiries as their
    /// periods end at the store's renewal rate.
    func services(logger: Logger) async -> [any Service] {
        await store.postNotifications(to: notificationURL)
        let store = store
        return [
            PeriodicWorkService(name: "sandbox App Store billing", interval: .seconds(5), logger: logger) {
                let made = try await store.renewDue()
                return made.isEmpty ? nil : "\(made.count) subscription notifications"
            }
        ]
    }

    func addRoutes(to router: Router<OrderSafeRequestContext>, catalog: Catalog) async {
        SandboxAppStoreRoutes<OrderSafeRequestContext>(store: store).addRoutes(to: router.group("sandbox/appstore"))
        let products = Self.deviceProducts(catalog)
        await devices.setProducts(products)
        await store.setPrices(Dictionary(products.map { ($0.id, $0.price) }, uniquingKeysWith: { first, _ in first }))
        await store.setOffers(Self.offers(catalog))
        await store.setSubscriptionGroups(
            Dictionary(
                products.compactMap { product in product.subscription.map { (product.id, $0.groupID) } },
                uniquingKeysWith: { first, _ in first }))
        SandboxAppStoreDeviceRoutes<OrderSafeRequestContext>(devices: devices).addRoutes(
            to: router.group("sandbox/appstore"))
    }

    /// The catalog's subscription offers as App Store Connect would have them set up: each charges its `price`, else
    /// its product's.
    static func offers(_ catalog: Catalog) -> [String: SandboxAppStore.Offer] {
        var offers: [String: SandboxAppStore.Offer] = [:]
        for product in catalog.products {
            guard let full = product.price(for: .appStore) else { continue }
            for offer in product.promotionalOffers {
                offers[offer.id] = .init(kind: .promotional, price: offer.price ?? full)
            }
            for offer in product.winBackOffers { offers[offer.id] = .init(kind: .winBack, price: offer.price ?? full) }
        }
        return offers
    }

    /// The catalog's App Store products as the sandbox device's StoreKit sells them.
    static func deviceProducts(_ catalog: Catalog) -> [SandboxAppStoreDevices.DeviceProduct] {
        catalog.products.compactMap { product in
            guard let id = product.appStoreProductID, let price = product.price(for: .appStore) else { return nil }
            let type =
                switch product.kind {
                case .consumable: "Consumable"
                case .nonConsumable: "Non-Consumable"
                case .autoRenewableSubscription: "Auto-Renewable Subscription"
                case .nonRenewingSubscription: "Non-Renewing Subscription"
                }
            var subscription: SandboxAppStoreDevices.SubscriptionTerms?
            if product.kind == .autoRenewableSubscription {
                // Its period is what its grant extends the entitlement by (one month where the grant says nothing).
                let period = product.grants.lazy.compactMap { grant -> GrantPeriod? in
                    if case .extendEntitlement(_, let period) = grant { period } else { nil }
                }.first
                subscription = .init(
                    groupID: product.subscriptionGroup ?? SandboxAppStore.subscriptionGroup,
                    period: period ?? GrantPeriod(count: 1, unit: .month), introductoryOffer: product.introductoryOffer,
                    promotionalOffers: product.promotionalOffers.map { .init(id: $0.id, price: $0.price ?? price) },
                    winBackOffers: product.winBackOffers.map { .init(id: $0.id, price: $0.price ?? price) })
            }
            return .init(id: id, type: type, displayName: product.title, price: price, subscription: subscription)
        }
    }
}

extension SandboxProviders {
    /// The built-in App Store.
    var appStore: SandboxAppStore { simulator(AppStoreSimulator.self).store }
    /// The built-in App Store's device queues (what a phone's StoreKit talks to).
    var appStoreDevices: SandboxAppStoreDevices { simulator(AppStoreSimulator.self).devices }

    /// Signs transactions with the App Store sandbox's authority kept in `settings`' data folder (created if missing),
    /// for a server running on that folder to verify; see ``SandboxTransactionMinter``. Refused on a production
    /// configuration: nothing there trusts the sandbox's authority, and its private key has no business on that disk.
    public static func appStoreMinter(settings: Settings.Server, now: Date = Date()) throws -> SandboxTransactionMinter
    {
        guard settings.environment == .sandbox else {
            throw SettingsError(
                key: "server.environment", reason: "sandbox transactions are minted for a sandbox server only")
        }
        let folder = URL(fileURLWithPath: settings.dataDirectory).appendingPathComponent("sandbox")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return SandboxTransactionMinter(
            authority: try SandboxAppStoreCA.loadOrCreate(in: folder, now: now), bundleID: AppStoreSimulator.bundleID)
    }
}
