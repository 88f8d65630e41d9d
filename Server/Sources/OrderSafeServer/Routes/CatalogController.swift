import Engine
import Hummingbird
import OrderSafeModel

/// `GET /v1/catalog`: the products the app may offer (public: the app shows prices before sign-in). Cacheable for
/// five minutes, by the phone and by any proxy or CDN in front: the catalog changes only with a restart, and phones
/// behind one carrier-grade NAT then ask it once each in that time, not once per screen.
struct CatalogController {
    let catalog: ActiveCatalog

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.get("catalog") { _, _ in
            var response = try Response.json(
                CatalogResponse(version: catalog.catalog.version, products: catalog.catalog.products))
            response.headers[.cacheControl] = "public, max-age=300"
            return response
        }
    }
}
