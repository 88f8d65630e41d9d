import Foundation
import Ledger
import OrderSafeModel

/// Rebuilds an order the ledger lacks — lost with a database restored from a backup older than its payment — from
/// the provider's signed record alone: the order number it was paid under (`out_trade_no`) and the
/// ``OrderProvenance`` this server gave the provider with it. The rebuilt order is the user's, for that product, at
/// the amount the provider took; its payment is then recorded through the channel's own path, once.
///
/// What cannot be rebuilt — no provenance, another text in its place, a product the catalog no longer lists — is
/// answered with the reason, for the caller to flag with its evidence; nothing is guessed.
struct OrderRebuilder: Sendable {
    let context: EngineContext<any OrderBook>

    /// The order `orderNo` of `channel` as the provider's `provenance` text describes it, created (callers ask the
    /// ledger first; an order of that number made meanwhile — a concurrent rebuild — is answered as it is).
    func order(
        _ orderNo: String, channel: Channel, provenance text: String?, amount: Money, createdAt: Date
    ) async throws -> OrderRebuild {
        guard let text, !text.isEmpty else {
            return .unrebuildable("the provider's record of \(orderNo) carries no provenance (user and product)")
        }
        guard let provenance = OrderProvenance(text: text) else {
            return .unrebuildable(
                "the provider's record of \(orderNo) carries a text that is not OrderSafe's provenance")
        }
        guard context.catalog.catalog.product(id: provenance.productID) != nil else {
            return .unrebuildable("product \(provenance.productID) of \(orderNo) is not in the catalog")
        }
        let new = NewOrder(
            userID: provenance.userID, productID: provenance.productID, channel: channel, amount: amount,
            catalogVersionID: context.catalog.version.id, origin: .adopted, createdAt: createdAt)
        let identity = OrderIdentity(orderNo: orderNo, orderUUID: UUID())
        do {
            if case .created(let order) = try await context.ledger.createOrder(new, identity: { identity }) {
                context.logger.notice(
                    "order rebuilt from the provider's record",
                    metadata: ["order_no": "\(orderNo)", "channel": "\(channel.rawValue)"])
                return .rebuilt(order)
            }
        } catch LedgerError.orderNumberExhausted {
            // The number is taken (a concurrent rebuild, or the order itself): read below.
        }
        guard let order = try await context.ledger.order(number: orderNo) else {
            return .unrebuildable("order \(orderNo) could be neither created nor read")
        }
        return order.channel == channel
            ? .rebuilt(order) : .unrebuildable("order \(orderNo) is in the ledger, of another channel")
    }
}

/// The outcome of rebuilding one order from the provider's record.
public enum OrderRebuild: Sendable {
    case rebuilt(Order)
    /// Why it cannot be rebuilt, for the caller to flag with its evidence.
    case unrebuildable(String)
}
