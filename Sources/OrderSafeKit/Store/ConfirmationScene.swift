#if os(iOS) || os(tvOS) || os(visionOS)
import UIKit
#elseif os(Linux)
import StoreKitStandIn
#endif

#if os(iOS) || os(tvOS) || os(visionOS) || os(Linux)
/// The scene StoreKit shows its purchase sheet over: UIKit's `UIScene`, passed to
/// `Product.purchase(confirmIn:options:)` (iOS 17+, tvOS 17+, visionOS). Apple recommends it in apps with more than
/// one scene; on visionOS a purchase needs one (OrderSafeKit takes the foreground scene when the app names none).
public typealias ConfirmationScene = UIScene
#else
/// macOS and watchOS have no scene to confirm a purchase in: StoreKit places its sheet itself.
public enum ConfirmationScene: Sendable {}
#endif
