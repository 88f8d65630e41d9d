// swift-tools-version: 6.1
import Foundation
import PackageDescription

// The server, its tools and tests: a package of its own beside the client SDK's (the repository's root package, which
// apps add by the repository's URL and which resolves no package of the server's). SwiftPM names a package depended
// on by path after its folder, whatever the clone is called: hence the parent folder's name.
let client = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "OrderSafeServer",
    platforms: [.macOS(.v15), .iOS(.v15)],
    products: [
        .executable(name: "ordersafe", targets: ["ordersafe"]),
        .library(name: "Ledger", targets: ["Ledger"]),
        .library(name: "ChannelSupport", targets: ["ChannelSupport"]),
        .library(name: "Alipay", targets: ["Alipay"]),
        .library(name: "AppStore", targets: ["AppStore"]),
        .library(name: "WeChatPay", targets: ["WeChatPay"]),
        .library(name: "Engine", targets: ["Engine"]),
        .library(name: "Sandbox", targets: ["Sandbox"]),
        .library(name: "OrderSafeServer", targets: ["OrderSafeServer"]),
        .executable(name: "ordersafe-device", targets: ["ordersafe-device"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.20.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.24.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/vapor/async-kit", from: "1.19.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.0.0"),
        .package(url: "https://github.com/vapor/postgres-kit", from: "2.14.0"),
        .package(url: "https://github.com/vapor/sql-kit", from: "3.30.0"),
        .package(url: "https://github.com/vapor/sqlite-kit", from: "4.5.0"),
    ],
    targets: [
        .executableTarget(
            name: "ordersafe-device",
            dependencies: [
                .product(name: "OrderSafeKit", package: client), .product(name: "OrderSafeModel", package: client),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // zlib, for the zip and gzip files providers publish their statements in.
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "ChannelSupport",
            dependencies: [
                "CZlib",
                .product(name: "OrderSafeModel", package: client),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "Ledger",
            dependencies: [
                .product(name: "OrderSafeModel", package: client),
                .product(name: "AsyncKit", package: "async-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SQLKit", package: "sql-kit"),
                // Ledger also imports VaporCSQLite, the SQLite that sqlite-kit's sqlite-nio compiles in (a module of
                // that package, visible to its dependents but no product of it, so it cannot be declared here):
                // PreparedSQLiteConnection uses the same copy of SQLite.
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
            ]
        ),
        .target(
            name: "Alipay",
            dependencies: [
                "ChannelSupport",
                .product(name: "OrderSafeModel", package: client),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            name: "AppStore",
            dependencies: [
                "ChannelSupport",
                .product(name: "OrderSafeModel", package: client),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            name: "WeChatPay",
            dependencies: [
                "ChannelSupport",
                .product(name: "OrderSafeModel", package: client),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            name: "Sandbox",
            dependencies: [
                "Alipay",
                "AppStore",
                "ChannelSupport",
                "WeChatPay",
                .product(name: "OrderSafeModel", package: client),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            name: "Engine",
            dependencies: [
                "Alipay",
                "AppStore",
                "ChannelSupport",
                "WeChatPay",
                .product(name: "OrderSafeModel", package: client),
                "Ledger",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "OrderSafeServer",
            dependencies: [
                "Alipay",
                "AppStore",
                "ChannelSupport",
                "WeChatPay",
                "Sandbox",
                .product(name: "OrderSafeModel", package: client),
                "Ledger",
                "Engine",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            resources: [
                .copy("Resources/openapi.json"), .copy("Resources/catalog.example.json"), .copy("Resources/console"),
            ]
        ),
        // glibc's malloc.h (malloc_trim), for the benchmarks' readings of what a step keeps allocated.
        .systemLibrary(name: "CMalloc"),
        .executableTarget(
            name: "ordersafe",
            dependencies: [
                "AppStore",
                "ChannelSupport",
                "Engine",
                "Ledger",
                .product(name: "OrderSafeModel", package: client),
                "OrderSafeServer",
                "Sandbox",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // The server allocates with jemalloc (Debian's libjemalloc-dev to build, libjemalloc2 to run), linked ahead
            // of the C library so that every allocation in the process is its, the C library's own included: on
            // PostgreSQL glibc was 11.1% of a replica's samples, both allocators are 6.8% now, the CPU per fresh
            // submission ×0.95 (docs/benchmarks.md, "The allocator").
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]
        ),
        .executableTarget(
            name: "ordersafe-bench",
            dependencies: [
                "Alipay",
                "AppStore",
                "ChannelSupport",
                "CMalloc",
                "Engine",
                "Ledger",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "SQLKit", package: "sql-kit"),
                "Sandbox",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                "WeChatPay",
                .product(name: "OrderSafeModel", package: client),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(name: "OracleSupport", path: "Tests/OracleSupport"),
        .target(
            name: "LedgerTestSupport",
            dependencies: [
                "Ledger", .product(name: "OrderSafeModel", package: client),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"), .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/LedgerTestSupport"),
        .testTarget(
            name: "LedgerTests",
            dependencies: [
                "Ledger", "LedgerTestSupport", .product(name: "OrderSafeModel", package: client),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"), .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        .testTarget(
            name: "EngineTests",
            dependencies: [
                "Alipay", "AppStore", "ChannelSupport", "Engine", "Ledger", "LedgerTestSupport",
                .product(name: "OrderSafeModel", package: client),
                "Sandbox", "WeChatPay",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]),
        .testTarget(name: "ChannelSupportTests", dependencies: ["ChannelSupport"]),
        .testTarget(
            name: "AppStoreTests",
            dependencies: [
                "AppStore", "ChannelSupport", "OracleSupport", .product(name: "OrderSafeModel", package: client),
                "Sandbox",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .testTarget(
            name: "WeChatPayTests",
            dependencies: [
                "ChannelSupport", "OracleSupport", .product(name: "OrderSafeModel", package: client), "WeChatPay",
                "Sandbox",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            exclude: ["RealSamples"]
        ),
        .testTarget(
            name: "AlipayTests",
            dependencies: [
                "Alipay", "ChannelSupport", "OracleSupport", .product(name: "OrderSafeModel", package: client),
                "Sandbox",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            exclude: ["RealSamples"]
        ),
        .testTarget(
            name: "OrderSafeServerTests",
            dependencies: [
                "Alipay",
                "AppStore",
                "ChannelSupport",
                "Engine",
                "Ledger",
                "LedgerTestSupport",
                .product(name: "OrderSafeKit", package: client),
                .product(name: "OrderSafeModel", package: client),
                "OrderSafeServer",
                "Sandbox",
                "WeChatPay",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Every Swift target above: an async function not isolated to an actor runs on its caller's executor (SE-0461, the
// default of Swift's next language mode) instead of first asking the runtime to run on the generic one. Each ask reads
// the task's status atomically, and locks it in a task with an executor preference (the SQLite writer's and readers'):
// a fresh submission asked 245 times, 105 of them locked; now 166 and 48 (docs/benchmarks.md). A function that must
// leave its caller's executor says @concurrent, as the middlewares' `next` does to match Hummingbird's protocol.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
}

// The libFuzzer harness (scripts/fuzz), only when asked for: it is built with -sanitize=fuzzer,address, which no
// other product wants.
if Context.environment["ORDERSAFE_FUZZ"] != nil {
    package.targets.append(.target(name: "CFuzzerDriver", path: "Fuzz/Sources/CFuzzerDriver"))
    package.targets.append(
        .executableTarget(
            name: "ordersafe-fuzz",
            dependencies: [
                "Alipay", "AppStore", "CFuzzerDriver", "ChannelSupport",
                .product(name: "OrderSafeModel", package: client), "Sandbox", "WeChatPay",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Fuzz/Sources/ordersafe-fuzz"))
    package.products.append(.executable(name: "ordersafe-fuzz", targets: ["ordersafe-fuzz"]))
}
