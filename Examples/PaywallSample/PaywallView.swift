#if canImport(SwiftUI)
import OrderSafeKit
import SwiftUI

/// The sample paywall on iOS 15 and later: ``OrderSafeObservableModel`` as a `@StateObject`.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
public struct PaywallView: View {
    @StateObject private var model: OrderSafeObservableModel
    private let language = MessageLanguage.preferred()

    public init(orderSafe: OrderSafe) {
        _model = StateObject(wrappedValue: OrderSafeObservableModel(orderSafe))
    }

    public var body: some View {
        PaywallList(model: model, language: language).task { _ = try? await model.loadPaywall() }
    }
}

/// The same paywall on iOS 17 and later: ``OrderSafeViewModel``, observed by SwiftUI without a wrapper.
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
public struct ModernPaywallView: View {
    @State private var model: OrderSafeViewModel
    private let language = MessageLanguage.preferred()

    public init(orderSafe: OrderSafe) {
        _model = State(initialValue: OrderSafeViewModel(orderSafe))
    }

    public var body: some View {
        PaywallList(model: model, language: language).task { _ = try? await model.loadPaywall() }
    }
}

/// The rows, their buttons, the renewal terms and the restore button both views show, from either model.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
struct PaywallList: View {
    let rows: [PaywallRow]
    let isRestoring: Bool
    let buy: @MainActor (String, Channel) -> Void
    let buyOffer: @MainActor (String, String) -> Void
    let restore: @MainActor () -> Void

    init(model: some OrderSafeStateHolder, language: MessageLanguage) {
        rows = model.state.paywall.map { PaywallRows.rows($0, state: model.state, language: language) } ?? []
        isRestoring = model.state.isRestoring
        buy = { id, channel in Task { await model.purchase(id, through: channel, confirmIn: nil) } }
        buyOffer = { id, offer in Task { await model.purchase(id, offer: offer, confirmIn: nil) } }
        restore = { Task { _ = try? await model.restore() } }
    }

    var body: some View {
        List {
            ForEach(rows) { row in
                VStack(alignment: .leading, spacing: 6) {
                    Text(row.title).font(.headline)
                    Text(row.price)
                    if let intro = row.introductoryOffer { Text(intro).font(.subheadline) }
                    ForEach(row.channels, id: \.self) { channel in
                        Button(channel == .appStore ? "Subscribe" : "Pay with \(channel.rawValue)") {
                            buy(row.id, channel)
                        }
                        .disabled(row.isBuying)
                    }
                    ForEach(row.offers) { offer in
                        Button(offer.label) { buyOffer(row.id, offer.id) }.disabled(row.isBuying)
                    }
                    if let terms = row.renewalTerms { Text(terms).font(.footnote) }
                }
            }
            Button("Restore Purchases", action: restore).disabled(isRestoring)
        }
    }
}
#endif
