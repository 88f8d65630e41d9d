import Engine
import Hummingbird
import OrderSafeModel

/// `GET /v1/catalog`: the products the app may offer (public: the app shows prices before sign-in).
struct CatalogController {
    let catalog: ActiveCatalog

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.get("catalog") { _, _ in
            try Response.json(CatalogResponse(version: catalog.catalog.version, products: catalog.catalog.products))
        }
    }
}
