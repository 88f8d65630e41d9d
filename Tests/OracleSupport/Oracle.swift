import Foundation

/// An independent implementation installed by `scripts/oracles/setup` into `.build/oracles/NAME`, driven by the
/// matching script in `scripts/oracles/` with a JSON list of operations on standard input.
public struct Oracle: Sendable {
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    let name: String
    let script: String

    public init(name: String, script: String) {
        self.name = name
        self.script = script
    }

    var python: URL { Self.repository.appendingPathComponent(".build/oracles/\(name)/bin/python") }

    /// True when installed. When missing, says so loudly; `scripts/test` requires them (ORDERSAFE_TEST_REQUIRE_ORACLES=1).
    public var isAvailable: Bool {
        let present = FileManager.default.isExecutableFile(atPath: python.path)
        if !present {
            print("⚠️  oracle \(name) is not installed: interoperability tests against it are SKIPPED (run scripts/oracles/setup)")
        }
        return present || ProcessInfo.processInfo.environment["ORDERSAFE_TEST_REQUIRE_ORACLES"] == "1"
    }

    /// Runs the operations and returns one result per operation.
    public func run(_ operations: [[String: Any]]) throws -> [Any] {
        let process = Process()
        process.executableURL = python
        process.arguments = [Self.repository.appendingPathComponent("scripts/oracles/\(script)").path]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: operations))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let results = try JSONSerialization.jsonObject(with: data) as? [Any] else {
            throw OracleFailure(detail: String(decoding: stderr, as: UTF8.self))
        }
        return results
    }

    public struct OracleFailure: Error, CustomStringConvertible {
        var detail: String
        public var description: String { "oracle failed: \(detail)" }
    }
}
