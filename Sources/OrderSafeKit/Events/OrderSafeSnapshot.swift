import Foundation
import OrderSafeModel

/// What the app shows, as of the last event: the products, the signed-in user's entitlements and balances, and the
/// purchases of this session as they move. ``OrderSafe/snapshot()`` gives it at any moment (a view that appears late
/// sees the current state, not only what happens next); ``OrderSafeViewModel`` keeps it for SwiftUI.
public struct OrderSafeSnapshot: Sendable, Hashable {
    /// Who is signed in; nil: nobody.
    public internal(set) var userID: String?
    /// The products on sale, once loaded.
    public internal(set) var products: ProductList?
    /// The signed-in user's entitlements and balances, once loaded.
    public internal(set) var entitlements: HoldingsResponse?
    /// The signed-in user's subscriptions, one per subscription group, once loaded.
    public internal(set) var subscriptions: SubscriptionsResponse?
    /// This session's purchases of the signed-in user, oldest first (at most ``purchasesKept``).
    public internal(set) var purchases: [PurchaseProgress] = []
    /// The catalog ids of the promoted purchases the user started on the App Store and the app has not bought yet,
    /// oldest first (``OrderSafeEvent/promotedPurchase(productID:offerID:)``; at most ``purchasesKept``). They are the
    /// device's, not a user's: signing out keeps them.
    public internal(set) var promotedPurchases: [String] = []
    /// The offer tapped with each waiting promoted purchase that had one, by catalog id.
    public internal(set) var promotedOffers: [String: String] = [:]

    /// How many purchases a snapshot keeps: the oldest finished ones go first.
    public static let purchasesKept = 50

    init(userID: String? = nil) {
        self.userID = userID
    }

    /// The purchase of order `orderNo`, if this session saw it.
    public func purchase(orderNo: String) -> PurchaseProgress? {
        purchases.last { $0.orderNo == orderNo }
    }

    /// Applies one event. A user signing in or out takes the previous user's entitlements and purchases away.
    mutating func apply(_ event: OrderSafeEvent) {
        switch event {
        case .productsLoaded(let list):
            products = list
        case .orderCreated(let orderNo, let productID, let channel):
            if channel == .appStore {
                promotedPurchases.removeAll { $0 == productID }
                promotedOffers[productID] = nil
            }
            if purchase(orderNo: orderNo) == nil {
                append(PurchaseProgress(orderNo: orderNo, productID: productID, channel: channel))
            }
        case .purchaseStage(let orderNo, let stage):
            update(orderNo: orderNo) { $0.record(.stage(stage)) }
        case .purchaseOutcome(let outcome):
            if let orderNo = outcome.orderNo, purchase(orderNo: orderNo) != nil {
                update(orderNo: orderNo) { $0.record(.outcome(outcome)) }
            } else {
                var progress = PurchaseProgress(
                    orderNo: outcome.orderNo, productID: outcome.productID, channel: outcome.channel)
                progress.record(.outcome(outcome))
                append(progress)
            }
        case .entitlementsChanged(let holdings):
            entitlements = holdings
        case .subscriptionsChanged(let loaded):
            subscriptions = loaded
        case .signedIn(let user):
            if user != userID { forgetUser() }
            userID = user
        case .signedOut:
            forgetUser()
            userID = nil
        case .promotedPurchase(let productID, let offerID):
            promotedPurchases.removeAll { $0 == productID }
            promotedPurchases.append(productID)
            promotedOffers[productID] = offerID
            if promotedPurchases.count > Self.purchasesKept {
                promotedOffers[promotedPurchases.removeFirst()] = nil
            }
        case .transactionFinished, .journalProblem:
            break
        }
    }

    private mutating func forgetUser() {
        entitlements = nil
        subscriptions = nil
        purchases = []
    }

    private mutating func update(orderNo: String, _ change: (inout PurchaseProgress) -> Void) {
        guard let index = purchases.lastIndex(where: { $0.orderNo == orderNo }) else { return }
        change(&purchases[index])
    }

    private mutating func append(_ progress: PurchaseProgress) {
        purchases.append(progress)
        guard purchases.count > Self.purchasesKept else { return }
        let drop = purchases.firstIndex { $0.outcome?.isFinal == true } ?? 0
        purchases.remove(at: drop)
    }
}

/// One purchase as it moves: its order, each step in the order it happened, and where it is now.
public struct PurchaseProgress: Sendable, Hashable, Identifiable {
    /// The order's number; nil for a purchase that ended before its order was made.
    public var orderNo: String?
    public var productID: String
    public var channel: Channel
    /// Every step so far, oldest first (at most ``stepsKept``; the first ones go).
    public internal(set) var steps: [PurchaseStep] = [.ordered]
    /// The last outcome reported (final, or waiting).
    public internal(set) var outcome: PurchaseOutcome?

    public static let stepsKept = 32

    public var id: String { orderNo ?? "\(productID)|\(channel.rawValue)|\(steps.count)" }

    /// The step the purchase is at now.
    public var current: PurchaseStep { steps.last ?? .ordered }

    init(orderNo: String?, productID: String, channel: Channel) {
        self.orderNo = orderNo
        self.productID = productID
        self.channel = channel
        if orderNo == nil { steps = [] }
    }

    mutating func record(_ step: PurchaseStep) {
        if case .outcome(let outcome) = step { self.outcome = outcome }
        steps.append(step)
        if steps.count > Self.stepsKept { steps.removeFirst(steps.count - Self.stepsKept) }
    }
}

/// A step of a purchase.
public enum PurchaseStep: Sendable, Hashable {
    /// Its order exists on the server (and in the journal).
    case ordered
    /// It moved on: the store or provider is open, approval is awaited, the server is recording or confirming.
    case stage(PurchaseStage)
    /// It reached an outcome (final, or waiting).
    case outcome(PurchaseOutcome)
}
