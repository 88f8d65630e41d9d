import Foundation
import Testing

/// The stand-ins say StoreKit's names, shapes, availability and isolation, as Apple's interface declares them
/// (`../shared/reference/StoreKit-interface.txt`, read in place): the adapter written against them then meets the
/// same API on a device. What the stand-ins add or do differently is listed here with its reason.
@Suite("StoreKit stand-ins follow Apple's interface")
struct StandInInterfaceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let reference = root.deletingLastPathComponent().appendingPathComponent(
        "shared/reference/StoreKit-interface.txt")

    /// Public names of the stand-ins that StoreKit does not have, and why.
    static let ownNames: [String: String] = [
        "StandInDevice": "the Linux plumbing: the sandbox App Store's device queue the stand-ins read and write",
        "StandInError": "the stand-ins' own failures: no device connected, the sandbox refused, an answer unreadable",
        "UIScene": "UIKit's scene, which purchase(confirmIn:options:) takes: UIKit does not exist on Linux",
        "UIWindowScene":
            "UIKit's window scene, which the subscription and refund sheets take: UIKit does not exist on Linux",
        "Product.init(id:type:displayName:description:price:displayPrice:isFamilyShareable:subscription:currencyCode:)":
            "tests make products by hand; StoreKit's come only from the App Store",
    ]

    /// StoreKit's RawRepresentable structs have these, which the condensed interface strips as boilerplate.
    static func isRawValueBoilerplate(_ path: String) -> Bool {
        path.hasSuffix(".rawValue") || path.hasSuffix(".init(rawValue:)")
    }

    static func standIns() throws -> SwiftInterface {
        let folder = root.appendingPathComponent("Sources/StoreKitStandIn")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        let text = try files.sorted().map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }
        return SwiftInterface(text.joined(separator: "\n"))
    }

    @Test("every public name of the stand-ins is StoreKit's, of the same kind, isolation and iOS availability")
    func standInsFollowTheReference() throws {
        guard FileManager.default.fileExists(atPath: Self.reference.path) else {
            print("⚠️  ../shared/reference/StoreKit-interface.txt is missing: the stand-ins' interface is NOT CHECKED.")
            return
        }
        let apple = SwiftInterface(try String(contentsOf: Self.reference, encoding: .utf8)).overloads
        let ours = try Self.standIns().declarations
        #expect(ours.count > 40, "the reader found too little in the stand-ins: \(ours.count) declarations")
        var drift: [String] = []
        for (path, declaration) in ours.sorted(by: { $0.key < $1.key }) {
            if Self.ownNames.keys.contains(where: { path == $0 || path.hasPrefix($0 + ".") })
                || Self.isRawValueBoilerplate(path)
            {
                continue
            }
            guard let overloads = apple[path], let first = overloads.first else {
                drift.append("\(declaration): StoreKit has no such name")
                continue
            }
            // Overloads differing only in their parameters' types share a path: one of them must match.
            let each = overloads.map { Self.differences(declaration, $0) }
            if !each.contains(where: \.isEmpty) {
                drift +=
                    overloads.count == 1 ? each[0] : ["\(declaration): no overload of StoreKit's matches (\(first))"]
            }
        }
        #expect(drift == [], "\(drift.joined(separator: "\n"))")
    }

    /// How `ours` differs from StoreKit's `theirs`: kind, isolation, unavailability, iOS version.
    static func differences(_ ours: SwiftInterface.Declaration, _ theirs: SwiftInterface.Declaration) -> [String] {
        var drift: [String] = []
        if theirs.kind != ours.kind {
            drift.append("\(ours): StoreKit's is a \(theirs.kind)")
        }
        if theirs.mainActor != ours.mainActor {
            drift.append("\(ours): StoreKit's is \(theirs.mainActor ? "" : "not ")@MainActor")
        }
        if theirs.unavailable != ours.unavailable {
            drift.append("\(ours): StoreKit's is unavailable on \(theirs.unavailable.sorted())")
        }
        if (theirs.iOS ?? "15.0") != (ours.iOS ?? "15.0") {
            drift.append("\(ours): StoreKit's is available from iOS \(theirs.iOS ?? "15.0")")
        }
        return drift
    }

    @Test("the reader sees kinds, labels, isolation and availability, and an enum where StoreKit has a struct")
    func theReaderSeesDrift() {
        let apple = SwiftInterface(
            """
            public struct Transaction : Identifiable {
                public struct OwnershipType : RawRepresentable, Equatable, Hashable {
                    public static let purchased: Transaction.OwnershipType
                    @available(iOS 15.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, macOS 12.0, *)
                }
                @available(iOS 16.0, macOS 13.0, *)
                public let environment: AppStore.Environment
                @available(macOS, unavailable)
                @MainActor public func purchase(confirmIn scene: some UIScene, options: Set<Product.PurchaseOption> = []) async throws -> Int
            }
            """
        ).declarations
        #expect(apple["Transaction.OwnershipType"]?.kind == "struct")
        #expect(apple["Transaction.OwnershipType.purchased"]?.kind == "property")
        #expect(apple["Transaction.environment"]?.iOS == "16.0")
        #expect(apple["Transaction.purchase(confirmIn:options:)"]?.mainActor == true)
        #expect(apple["Transaction.purchase(confirmIn:options:)"]?.unavailable == ["macOS"])
        let ours = SwiftInterface(
            """
            public struct Transaction: Identifiable, Hashable, Sendable {
                public enum OwnershipType: Hashable, Sendable {
                    case purchased, familyShared
                }
                public let environment: String
            }
            """
        ).declarations
        #expect(ours["Transaction.OwnershipType"]?.kind == "enum")
        #expect(ours["Transaction.OwnershipType.familyShared"]?.kind == "case")
        #expect(ours["Transaction.environment"]?.iOS == nil)
    }
}
