/// Linux stand-in for UIKit's `UIScene` (iOS 13+, `@MainActor`): what `Product.purchase(confirmIn:options:)` takes.
/// The stand-in device records that a scene was passed; UIKit does not exist here.
@MainActor
open class UIScene {
    /// Which scene this is, for a test to tell them apart.
    public let title: String

    public init(title: String) {
        self.title = title
    }
}
