import ArgumentParser
import Foundation
import OrderSafeServer

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract:
            "A narrated end-to-end run on the built-in sandboxes: a crash, a lost notification, a duplicate, a refund.")

    @Option(
        help:
            "Keep the demo's ledger and sandbox keys in this folder (default: a temporary folder, removed afterwards).")
    var keep: String?

    func run() async throws {
        let folder =
            keep.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("ordersafe-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { if keep == nil { try? FileManager.default.removeItem(at: folder) } }
        let start = ContinuousClock.now
        let passed = try await OrderSafeDemo { print($0) }.run(folder: folder)
        print(
            "\n\(passed ? "All invariants hold." : "AN INVARIANT FAILED.") (\(start.duration(to: .now).formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))))"
        )
        if !passed { throw ExitCode.failure }
    }
}
