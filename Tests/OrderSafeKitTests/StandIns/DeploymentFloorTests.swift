import Foundation
import Testing

/// OrderSafeKit builds for the floor its `Package.swift` declares (iOS 15, macOS 12…), which Linux's compiler never
/// checks: `@available(iOS 16, *)` means nothing on Linux. So the SDK's sources are read for the names of the
/// toolchain's own interfaces (the standard library, concurrency, Regex, Observation, Synchronization: the
/// `.swiftinterface` files beside `swift`, which carry Apple's availability) and of StoreKit's reference interface
/// that are newer than the floor, and each use must sit inside an `@available` or `if #available` that covers it.
/// A reader, not a compiler: it knows top-level types and functions by name and first argument label; Foundation has
/// no interface on Linux and is not checked.
@Suite("OrderSafeKit stays within its deployment floor")
struct DeploymentFloorTests {
    static let root = StandInInterfaceTests.root

    /// The shipping sources: what an app compiles.
    static let shippedFolders = ["Sources/OrderSafeKit", "Sources/OrderSafeModel"]

    @Test("no API newer than the floor is used outside an @available or #available that covers it")
    func sourcesStayWithinTheFloor() throws {
        let floor = try DeploymentFloor(
            packageManifest: String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8))
        #expect(floor.versions["iOS"] == [15], "the floor read from Package.swift: \(floor.versions)")
        var interfaces = try Self.toolchainInterfaces()
        #expect(interfaces.count >= 3, "the toolchain's interfaces were not found beside `swift`")
        if FileManager.default.fileExists(atPath: StandInInterfaceTests.reference.path) {
            interfaces.append(try String(contentsOf: StandInInterfaceTests.reference, encoding: .utf8))
        } else {
            print("⚠️  ../shared/reference/StoreKit-interface.txt is missing: StoreKit's availability is NOT CHECKED.")
        }
        var newer = floor.newer(in: interfaces.map(SwiftInterface.init))
        #expect(newer.types["Duration"] != nil && newer.functions["sleep(for:"] != nil, "the reader found no newer API")
        let files = try Self.shippedFiles().map { ($0, try String(contentsOf: $0, encoding: .utf8)) }
        for own in DeploymentFloor.declaredFunctions(in: files.map(\.1)) { newer.functions[own] = nil }
        var found: [String] = []
        for (file, text) in files {
            for use in floor.uncovered(in: text, newer: newer) {
                found.append("\(file.lastPathComponent):\(use)")
            }
        }
        #expect(found == [], "\(found.joined(separator: "\n"))")
    }

    @Test("the check finds a newer call, and accepts it under @available or in an if #available branch")
    func theCheckBites() throws {
        let floor = try DeploymentFloor(packageManifest: "platforms: [.iOS(.v15), .macOS(.v12)],")
        let newer = floor.newer(in: [
            SwiftInterface(
                """
                @available(macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0, *)
                @frozen public struct Duration : Swift.Sendable {
                }
                extension Task where Success == Never, Failure == Never {
                  @available(macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0, *)
                  public static func sleep(for duration: Duration, tolerance: Duration? = nil) async throws
                  public static func sleep(nanoseconds duration: UInt64) async throws
                }
                """)
        ])
        let uses = floor.uncovered(
            in: """
                func wait() async throws {
                    try await Task.sleep(for: .seconds(1))  // Task.sleep(for: in a comment is no use
                    try await Task.sleep(nanoseconds: 1)
                }
                @available(iOS 16.0, macOS 13.0, *)
                func waitLonger() async throws {
                    let limit: Duration = .seconds(2)
                    try await Task.sleep(for: limit)
                }
                func waitIfItCan() async throws {
                    if #available(iOS 16.0, macOS 13.0, *) {
                        try await Task.sleep(for: .seconds(1))
                    } else {
                        let late = "Task.sleep(for: in a string is no use"
                        try await Task.sleep(for: .seconds(3))
                    }
                }
                @available(iOS 16.0, *)
                func onlyOnePlatform() async throws { try await Task.sleep(for: .seconds(4)) }
                @available(iOS 16.0, macOS 13.0, *)
                func inItsSignature(_ limit: Duration) -> Duration { limit }
                func outsideAny(_ limit: Duration) {}
                func aMemberOfTheSameName(_ limit: Clock.Duration) {}
                """, newer: newer)
        #expect(
            uses == [
                "2: sleep(for: (iOS 16.0, macOS 13.0)", "15: sleep(for: (iOS 16.0, macOS 13.0)",
                "19: sleep(for: (iOS 16.0, macOS 13.0)", "22: Duration (iOS 16.0, macOS 13.0)",
            ], "a member type of a newer type's name (Clock.Duration) is not that type")
    }

    static func shippedFiles() throws -> [URL] {
        var files: [URL] = []
        for folder in shippedFolders {
            let url = root.appendingPathComponent(folder)
            guard let walk = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in walk where file.pathExtension == "swift" { files.append(file) }
        }
        return files.sorted { $0.path < $1.path }
    }

    /// The public interfaces of the toolchain running the tests: `<swift>/../lib/swift/linux/*.swiftmodule`.
    static func toolchainInterfaces() throws -> [String] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map {
            URL(fileURLWithPath: String($0)).appendingPathComponent("swift")
        }
        guard let swift = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            return []
        }
        let lib = swift.resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("lib/swift/linux")
        var texts: [String] = []
        for module in ["Swift", "_Concurrency", "_StringProcessing", "RegexBuilder", "Observation", "Synchronization"] {
            let folder = lib.appendingPathComponent("\(module).swiftmodule")
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for file in files where file.hasSuffix(".swiftinterface") && !file.hasSuffix(".private.swiftinterface") {
                texts.append(try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8))
            }
        }
        return texts
    }
}
