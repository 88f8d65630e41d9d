// The wire types OrderSafeKit's API speaks (`Channel`, `Money`, `HoldingsResponse`, `ProductKind`…) come with it:
// an app writes one import. None is named as a StoreKit type is (the catalog's product is `CatalogProduct`, a user's
// subscription `UserSubscription`): DeploymentFloorTests fails on a name StoreKit declares newer than the floor.
@_exported import OrderSafeModel
