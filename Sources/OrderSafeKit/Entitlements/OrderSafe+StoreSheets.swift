import Foundation
import OrderSafeModel

extension OrderSafe {
    /// Apple's subscription management sheet over `scene` (a window scene; iOS and visionOS), opened on
    /// `subscriptionGroupID` where the system can (iOS 17): the user cancels, changes plan or turns auto-renew off
    /// there, and the App Store tells the server, so ``subscriptions(allowCached:)`` shows it. Refreshes the
    /// subscriptions once the sheet is closed.
    public func showManageSubscriptions(in scene: ConfirmationScene, subscriptionGroupID: String? = nil)
        async throws(OrderSafeError)
    {
        do {
            try await store.showManageSubscriptions(in: scene, subscriptionGroupID: subscriptionGroupID)
        } catch {
            throw .store((error as? StoreFailure) ?? .other("\(error)"))
        }
        _ = try? await subscriptions(allowCached: false)
    }

    /// Apple's offer-code redemption sheet over `scene` (a window scene; iOS 16 and visionOS). What the user redeems
    /// there comes through `Transaction.updates` with no order of the app's: the server records it as the signed-in
    /// user's (an adopted order, like a purchase made on another device), and ``entitlements(allowCached:)`` and the
    /// events show it.
    public func presentOfferCodeRedemption(in scene: ConfirmationScene) async throws(OrderSafeError) {
        do {
            try await store.presentOfferCodeRedeemSheet(in: scene)
        } catch {
            throw .store((error as? StoreFailure) ?? .other("\(error)"))
        }
    }

    /// Apple's refund request sheet over `scene` (a window scene; iOS and visionOS) for the latest purchase of
    /// `productID` (a catalog id) that entitles this Apple ID now: true when the user sent the request. Apple decides
    /// later and tells the server (`REFUND`), which takes back what the purchase granted.
    public func requestRefund(for productID: String, in scene: ConfirmationScene) async throws(OrderSafeError) -> Bool {
        let catalog = try await loadCatalog()
        guard let product = catalog.products.first(where: { $0.id == productID }),
            let appStoreID = product.appStoreProductID
        else { throw .productNotFound(productID) }
        guard
            let transaction = await store.currentEntitlements().filter({ $0.productID == appStoreID })
                .max(by: { $0.id < $1.id })
        else { throw .nothingToRefund(productID) }
        do {
            return try await store.beginRefundRequest(transactionID: transaction.id, in: scene)
        } catch {
            throw .store((error as? StoreFailure) ?? .other("\(error)"))
        }
    }

    /// Apple's refund request sheet over `scene` for the App Store purchase that paid the signed-in user's order
    /// `orderNo` (a ``PurchaseOutcome/orderNo``), whatever its product type — coins and other consumables too, which
    /// StoreKit's current entitlements never hold: true when the user sent the request. The server names the
    /// purchase's transaction; Apple decides later and tells the server (`REFUND`), which takes back what it granted.
    /// An order not paid (yet) is ``OrderSafeError/nothingToRefund(_:)``; one paid through Alipay or WeChat Pay is
    /// ``OrderSafeError/refundedByMerchant(orderNo:)``.
    public func requestRefund(forOrder orderNo: String, in scene: ConfirmationScene) async throws(OrderSafeError)
        -> Bool
    {
        guard userID != nil else { throw .server(.signedOut) }
        let response: OrderResponse
        do {
            response = try await api.orderResponse(orderNo)
        } catch let problem as ServerProblem {
            throw .server(problem)
        } catch {
            throw .server(.malformedAnswer("\(error)"))
        }
        guard response.order.channel == .appStore else { throw .refundedByMerchant(orderNo: orderNo) }
        guard let id = response.providerTransactionID.flatMap(UInt64.init) else {
            throw .nothingToRefund(response.order.productID)
        }
        do {
            return try await store.beginRefundRequest(transactionID: id, in: scene)
        } catch {
            throw .store((error as? StoreFailure) ?? .other("\(error)"))
        }
    }
}
