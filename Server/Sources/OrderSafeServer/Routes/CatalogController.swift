import Engine
import Hummingbird
import OrderSafeModel

/// `GET /v1/catalog`: the products the app may offer (public: the app shows prices before sign-in). Cacheable for
/// five minutes, by the phone and by any proxy or CDN in front: the catalog changes only with a restart, and phones
/// behind one carrier-grade NAT then ask it once each in that time, not once per screen. Asked with a user's token
/// (a bad one is refused as on every user route), it adds the user's introductory-offer eligibility and the
/// promotional and win-back offers they may have now, and is cached by nobody.
struct CatalogController {
    let catalog: ActiveCatalog
    /// Authenticates a request that carries a token, as every user route does.
    let users: UserAuthMiddleware
    let subscriptions: Subscriptions
    /// Each adds what it offers the user (``PaymentChannel/personalise(_:userID:eligibility:)``).
    let channels: [any PaymentChannel]

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.get("catalog") { request, context in
            var answer = CatalogResponse(version: catalog.catalog.version, products: catalog.catalog.products)
            guard request.headers.value(of: .authorization) != nil else {
                var response = try Response.json(answer)
                response.headers[.cacheControl] = "public, max-age=300"
                return response
            }
            let user = try await users.user(of: request, context: context)
            let eligibility = try await subscriptions.introductoryEligibility(userID: user.id)
            answer.introductoryOffers = eligibility.map {
                IntroductoryOfferEligibility(productID: $0.product.id, eligible: $0.eligible)
            }
            answer.offers = []
            for channel in channels {
                try await channel.personalise(&answer, userID: user.id, eligibility: eligibility)
            }
            var response = try Response.json(answer)
            response.headers[.cacheControl] = "private, no-store"
            return response
        }
    }
}
