#if os(Linux)
// On Linux — the SDK's tests, the server's simulated iPhone (`ordersafe-device`) and its end-to-end tests — StoreKit's
// and UIKit's names come from the stand-ins, and whoever imports OrderSafeKit sees them as an app sees StoreKit's next
// to it. StoreKitStandIn is no product: an app cannot add it.
@_exported import StoreKitStandIn
#endif
