// The wire types OrderSafeKit's API speaks (`Channel`, `Money`, `HoldingsResponse`, `ProductKind`…) come with it:
// an app writes one import. The catalog's product is `CatalogProduct`, so StoreKit's `Product` stays unambiguous.
@_exported import OrderSafeModel
