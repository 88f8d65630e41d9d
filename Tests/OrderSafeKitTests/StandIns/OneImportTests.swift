import Foundation
import Testing

/// `import OrderSafeKit` brings OrderSafeModel with it, and an app imports StoreKit beside it: a public type of
/// either module named as one of StoreKit's would make that name ambiguous in the app (`Product` was, until the
/// catalog's became `CatalogProduct`).
@Suite("One import: no public type of OrderSafeKit or OrderSafeModel is named as a StoreKit type")
struct OneImportTests {
    static let typeKinds: Set<String> = ["struct", "enum", "class", "actor", "protocol", "typealias"]

    static func topLevelTypes(_ interface: SwiftInterface) -> Set<String> {
        Set(interface.declarations.values.filter { typeKinds.contains($0.kind) && !$0.path.contains(".") }.map(\.path))
    }

    @Test("the shipped modules' public type names and StoreKit's are apart")
    func noNameIsStoreKits() throws {
        guard FileManager.default.fileExists(atPath: StandInInterfaceTests.reference.path) else {
            print("⚠️  ../shared/reference/StoreKit-interface.txt is missing: names are NOT CHECKED against StoreKit's.")
            return
        }
        let storeKit = Self.topLevelTypes(
            SwiftInterface(try String(contentsOf: StandInInterfaceTests.reference, encoding: .utf8)))
        #expect(
            storeKit.isSuperset(of: ["Product", "Transaction", "SubscriptionStatus"]),
            "the reader found \(storeKit.count)")
        var ours: Set<String> = []
        for file in try DeploymentFloorTests.shippedFiles() {
            ours.formUnion(Self.topLevelTypes(SwiftInterface(try String(contentsOf: file, encoding: .utf8))))
        }
        #expect(
            ours.isSuperset(of: ["OrderSafe", "CatalogProduct", "UserSubscription"]), "the reader found \(ours.count)")
        #expect(ours.intersection(storeKit) == [], "named as StoreKit's: \(ours.intersection(storeKit).sorted())")
    }
}
