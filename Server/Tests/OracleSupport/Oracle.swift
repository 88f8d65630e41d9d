import Foundation

/// An independent implementation installed by `scripts/oracles/setup` into `.build/oracles/NAME`, driven by the
/// matching script in `scripts/oracles/` with a JSON list of operations on standard input.
public struct Oracle: Sendable {
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
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
            print(
                "⚠️  oracle \(name) is not installed: interoperability tests against it are SKIPPED (run scripts/oracles/setup)"
            )
        }
        return present || ProcessInfo.processInfo.environment["ORDERSAFE_TEST_REQUIRE_ORACLES"] == "1"
    }

    /// Runs the operations and returns one result per operation. The Python process is waited for on a thread of
    /// its own: blocking one of Swift's cooperative threads (two on a two-core machine) stalled every other test of
    /// the process — live servers stopped answering for tens of seconds and their timeouts tripped.
    public func run(_ operations: [[String: Any]]) async throws -> [Any] {
        let input = try JSONSerialization.data(withJSONObject: operations)
        let data = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result { try self.runBlocking(input) })
            }
        }
        guard let results = try JSONSerialization.jsonObject(with: data) as? [Any] else {
            throw OracleFailure(detail: "not a JSON list: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        return results
    }

    /// The process, with its standard error in a file (a full stderr pipe nobody reads would block it).
    private func runBlocking(_ input: Data) throws -> Data {
        let process = Process()
        process.executableURL = python
        process.arguments = [Self.repository.appendingPathComponent("scripts/oracles/\(script)").path]
        let stderrFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "oracle-\(UUID().uuidString).stderr")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: stderrFile) }
        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.run()
        stdinPipe.fileHandleForWriting.write(input)
        try stdinPipe.fileHandleForWriting.close()
        let data = stdoutPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OracleFailure(
                detail: (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "exit \(process.terminationStatus)")
        }
        return data
    }

    public struct OracleFailure: Error, CustomStringConvertible {
        var detail: String
        public var description: String { "oracle failed: \(detail)" }
    }
}
