import Foundation
import Hummingbird
import Ledger
import OrderSafeModel

extension ConsoleController {
    func addOfferRoutes(to admin: RouterGroup<OrderSafeRequestContext>) {
        admin.get("offers") { request, context in
            try await signedIn(request, context) { page in try await offers(page) }
        }
    }

    /// Each subscription's offers as the catalog lists them, with their rules and how often each was signed and
    /// taken; then the offers buyers took that the catalog does not list (introductory offers, offer codes).
    private func offers(_ page: PageRequest) async throws -> Response {
        let texts = page.texts
        var values = frame(page, title: texts["nav_offers"] ?? "", section: .offers)
        var counts = Dictionary(uniqueKeysWithValues: try await ledger.offerCounts().map { ($0.offer, $0) })
        func row(_ id: String, kind: String, audience: [OfferAudience], rule: OfferRule, price: Money?)
            -> [String: Any]
        {
            let named = OfferCount.names(ofOffer: id).compactMap { counts.removeValue(forKey: $0) }
            return [
                "id": id, "kind": texts["offer_\(kind)"] ?? kind,
                "audience": audience.map { texts["audience_\($0.rawValue)"] ?? $0.rawValue }.joined(separator: ", "),
                "rule": Self.rule(rule, texts), "price": price.map(ConsoleFormat.money) ?? "—",
                "signed": named.map(\.signed).reduce(0, +), "redeemed": named.map(\.redeemed).reduce(0, +),
                "lastSigned": page.format.time(named.compactMap(\.lastSignedAt).max()) ?? "—",
            ]
        }
        values["products"] = catalog.catalog.products.filter {
            !$0.promotionalOffers.isEmpty || !$0.winBackOffers.isEmpty
        }.map { product in
            [
                "productID": product.id, "title": product.title,
                "offers": product.promotionalOffers.map {
                    row($0.id, kind: "promotional", audience: $0.eligible, rule: $0.rule, price: $0.price)
                }
                    + product.winBackOffers.map {
                        row($0.id, kind: "win_back", audience: [.expired], rule: $0.rule, price: $0.price)
                    },
            ] as [String: Any]
        }
        values["others"] = counts.values.sorted { $0.offer < $1.offer }.map { count in
            ["offer": count.offer, "redeemed": count.redeemed] as [String: Any]
        }
        values["hasOthers"] = !counts.isEmpty
        return views.page("offers", values)
    }

    /// An offer's rule in the page's language: "within 90 days of expiry, 1 per user, the merchant decides".
    static func rule(_ rule: OfferRule, _ texts: [String: String]) -> String {
        var parts: [String] = []
        if let days = rule.withinDays {
            parts.append((texts["offer_within_days"] ?? "%d").replacingOccurrences(of: "%d", with: "\(days)"))
        }
        if let limit = rule.perUser {
            parts.append((texts["offer_per_user"] ?? "%d").replacingOccurrences(of: "%d", with: "\(limit)"))
        }
        if rule.askMerchant { parts.append(texts["offer_ask_merchant"] ?? "") }
        return parts.isEmpty ? "—" : parts.joined(separator: texts["list_separator"] ?? ", ")
    }
}
