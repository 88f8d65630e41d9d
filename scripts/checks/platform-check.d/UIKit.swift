// UIKit's names that OrderSafeKit's iOS, tvOS and visionOS branches use, for scripts/checks/platform-check to
// type-check those branches on Linux. Shapes as UIKit declares them (`UIApplication.shared.connectedScenes`,
// `UIScene.activationState`); the scenes themselves are StoreKitStandIn's.
@_exported import StoreKitStandIn

@MainActor
public final class UIApplication {
    public static let shared = UIApplication()
    /// UIKit's is a `Set<UIScene>`; an array keeps the stand-in's `UIScene` free of `Hashable`.
    public var connectedScenes: [UIScene] { [] }
}

extension UIScene {
    public enum ActivationState: Int, Sendable {
        case unattached, foregroundActive, foregroundInactive, background
    }

    public var activationState: ActivationState { .unattached }
}
