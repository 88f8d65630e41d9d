import Foundation
import OrderSafeKit

/// JSON lines on standard output.
enum Output {
    private static let lock = NSLock()

    static func line(_ object: [String: Any]) {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        lock.withLock {
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        }
    }

    static func outcome(_ outcome: PurchaseOutcome) -> [String: Any] {
        var object: [String: Any] = [
            "outcome": outcome.name, "product_id": outcome.productID, "channel": outcome.channel.rawValue,
            "message_en": outcome.message(in: .english), "message_zh": outcome.message(in: .simplifiedChinese),
        ]
        object["order_no"] = outcome.orderNo
        object["order_status"] = outcome.order?.status.rawValue
        if case .failed(let error) = outcome.state { object["error"] = error.description }
        return object
    }

    static func event(_ event: OrderSafeEvent) -> [String: Any] {
        switch event {
        case .productsLoaded(let list):
            ["event": "products_loaded", "products": list.offers.map(\.id), "unknown_to_store": list.unknownToStore]
        case .orderCreated(let orderNo, let productID, let channel):
            ["event": "order_created", "order_no": orderNo, "product_id": productID, "channel": channel.rawValue]
        case .purchaseStage(let orderNo, let stage):
            ["event": "purchase_stage", "order_no": orderNo, "stage": stage.rawValue]
        case .purchaseOutcome(let outcome):
            ["event": "purchase_outcome"].merging(Self.outcome(outcome)) { first, _ in first }
        case .transactionFinished(let id, let orderNo):
            ["event": "transaction_finished", "transaction_id": String(id), "order_no": orderNo ?? NSNull()]
        case .entitlementsChanged(let holdings):
            [
                "event": "entitlements_changed",
                "balances": Dictionary(holdings.balances.map { ($0.name, $0.amount) }, uniquingKeysWith: +),
            ]
        case .journalProblem(let file, let reason): ["event": "journal_problem", "file": file, "reason": reason]
        case .signedIn(let userID): ["event": "signed_in", "user": userID]
        case .signedOut: ["event": "signed_out"]
        case .promotedPurchase(let productID, let offerID):
            ["event": "promoted_purchase", "product_id": productID, "offer_id": offerID ?? NSNull()]
        case .subscriptionsChanged(let loaded):
            [
                "event": "subscriptions_changed",
                "subscriptions": loaded.subscriptions.map { ["group_id": $0.groupID, "state": $0.state.rawValue] },
            ]
        }
    }
}
