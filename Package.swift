// swift-tools-version: 6.1
import PackageDescription

// The client SDK, which apps add by this repository's URL: Foundation and OrderSafeModel only, no other package.
// StoreKitStandIn gives StoreKit 2's and UIKit's names on Linux, where the SDK is tested against the sandbox App Store;
// it is no product (an app that could add it would have its `Product`, `Transaction` and `UIScene` shadow StoreKit's
// and UIKit's) and is built for Linux only: on Linux OrderSafeKit re-exports it, which is how the server's simulated
// iPhone (`ordersafe-device`) and end-to-end tests see it. The server is the package in Server/, which depends on this
// one by path.
let package = Package(
    name: "OrderSafeKit",
    defaultLocalization: "en",
    // StoreKit 2's floors. What a platform lacks is marked unavailable on the API itself: `purchase(confirmIn:)` on
    // macOS and watchOS, promoted purchases on tvOS, watchOS and visionOS, the SwiftUI model before iOS 17.
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        .library(name: "OrderSafeKit", targets: ["OrderSafeKit"]),
        .library(name: "OrderSafeModel", targets: ["OrderSafeModel"]),
    ],
    targets: [
        .target(name: "OrderSafeModel"),
        .target(name: "StoreKitStandIn"),
        .target(
            name: "OrderSafeKit",
            dependencies: ["OrderSafeModel", .target(name: "StoreKitStandIn", condition: .when(platforms: [.linux]))],
            resources: [.process("Resources")]
        ),
        // The paywall sample (docs/sdk.md, the DocC catalog), no product: its presentation builds and is tested here,
        // its SwiftUI views type-check in scripts/checks/platform-check against SwiftUI's names.
        .target(name: "PaywallSample", dependencies: ["OrderSafeKit"], path: "Examples/PaywallSample"),
        .testTarget(name: "OrderSafeModelTests", dependencies: ["OrderSafeModel"]),
        .testTarget(
            name: "OrderSafeKitTests",
            dependencies: [
                "OrderSafeKit", "OrderSafeModel", "PaywallSample",
                .target(name: "StoreKitStandIn", condition: .when(platforms: [.linux])),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
