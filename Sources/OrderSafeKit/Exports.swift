// The API's wire types (Channel, Money, Order, HoldingsResponse, ProductKind, …) are OrderSafeKit's public API too:
// an app imports OrderSafeKit alone.
@_exported import OrderSafeModel
