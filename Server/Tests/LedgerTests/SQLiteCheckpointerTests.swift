import Foundation
import SQLKit
import Testing

@testable import Ledger

/// The SQLite writer's write-ahead log is copied back into the database file mostly beside the writer, and by the
/// writer itself only at the log's limit: the log must stay short however much is written, either way.
@Suite("Ledger: SQLite checkpoints beside the writer")
struct SQLiteCheckpointerTests {
    /// 200 commits of two pages and a bit: unchecked, the log would hold over 400 pages (1.6 MB).
    static let commits = 200

    @Test(
        "checkpoints beside the writer copy the log back as it grows, and it starts again: it stays a few pages long, every row readable"
    )
    func besideTheWriter() async throws {
        try await withFile { path in
            let source = SQLiteSessionSource(
                path: path, checkpointStep: 16, checkpointFinalStep: 16, checkpointLimit: 100_000,
                logger: .init(label: "test"))
            try await fill(source) { await source.checkpointer.settle() }
            #expect(try Self.logBytes(path) < 40 * 4_096)
            #expect(source.checkpointer.completed >= 10)
            try await source.shutdown()
        }
    }

    @Test("at the limit the writer checkpoints itself, so the log starts again even when no checkpoint beside it runs")
    func writerAtTheLimit() async throws {
        try await withFile { path in
            let source = SQLiteSessionSource(
                path: path, checkpointStep: 100_000, checkpointFinalStep: 100_000, checkpointLimit: 32,
                logger: .init(label: "test"))
            try await fill(source) {}
            #expect(try Self.logBytes(path) < 40 * 4_096)
            #expect(source.checkpointer.completed == 0)
            try await source.shutdown()
        }
    }

    @Test(
        "checkpoints come a step apart while the limit is far, then a final step apart, so the writer copies little at the limit"
    )
    func schedule() {
        func requests(step: Int, finalStep: Int, limit: Int, growing growth: Int) -> [Int] {
            var asked: [Int] = []
            var next = SQLiteCheckpointer.nextRequest(after: 0, step: step, finalStep: finalStep, limit: limit)
            var pages = 0
            while pages < limit {
                pages += growth
                if pages < limit, pages >= next {
                    asked.append(pages)
                    next = SQLiteCheckpointer.nextRequest(after: pages, step: step, finalStep: finalStep, limit: limit)
                }
            }
            return asked
        }
        #expect(
            requests(step: 2_000, finalStep: 250, limit: 16_000, growing: 1)
                == Array(stride(from: 2_000, through: 14_000, by: 2_000))
                + Array(stride(from: 14_250, to: 16_000, by: 250)))
        // Commits of many pages: a request late in the last coarse step still leaves the final ones before the limit.
        let large = requests(step: 2_000, finalStep: 250, limit: 16_000, growing: 700)
        #expect(large == [2_100, 4_200, 6_300, 8_400, 10_500, 12_600, 14_000, 14_700, 15_400])
        // A step longer than the limit: every request a final step apart (none when that is as long).
        #expect(requests(step: 100, finalStep: 10, limit: 32, growing: 1) == [10, 20, 30])
        #expect(requests(step: 100_000, finalStep: 100_000, limit: 32, growing: 1).isEmpty)
    }

    @Test("below the step no checkpoint runs")
    func belowTheStep() async throws {
        let source = SQLiteSessionSource(path: nil, logger: .init(label: "test"))
        try await write(source, "CREATE TABLE cp_row (id INTEGER PRIMARY KEY)")
        for id in 0..<20 {
            try await write(source, "INSERT INTO cp_row (id) VALUES (\(bind: id))")
        }
        await source.checkpointer.settle()
        #expect(source.checkpointer.completed == 0)
        try await source.shutdown()
    }

    private func fill(_ source: SQLiteSessionSource, afterEach: () async -> Void) async throws {
        try await write(source, "CREATE TABLE cp_row (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
        let blob = Data(repeating: 0x5a, count: 8_000)
        for id in 0..<Self.commits {
            try await write(source, "INSERT INTO cp_row (id, data) VALUES (\(bind: id), \(bind: blob))")
            await afterEach()
        }
        let rows = try await source.read { db in
            try await db.raw("SELECT COUNT(*) AS n, SUM(length(data)) AS bytes FROM cp_row").first()
        }
        #expect(try rows?.decode(column: "n", as: Int.self) == Self.commits)
        #expect(try rows?.decode(column: "bytes", as: Int.self) == Self.commits * 8_000)
    }

    private func withFile(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory.appendingPathComponent("ledger.sqlite3").path)
    }

    /// The log file's length: the furthest it ever reached, since a log that starts again is written over, not cut.
    private static func logBytes(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
    }

    private func write(_ source: SQLiteSessionSource, _ query: SQLQueryString) async throws {
        let failure = LedgerDatabase.FirstError()
        try await source.writeSession { db in
            do { try await db.raw(query).run() } catch { failure.record(error) }
        }
        if let error = failure.recorded { throw error }
    }
}
