import Foundation
import SQLKit
import Testing

@testable import Ledger

/// The writer's log writes are gathered until SQLite needs them in the file: what follows is kept, what does not is
/// handed on first, and a commit read from another connection, or after the ledger is opened again, is whole.
@Suite("Ledger: the writer's log writes gathered")
struct GatheredLogWritesTests {
    /// The writes handed on: offset and bytes.
    final class Recorder {
        var writes: [(offset: Int64, bytes: [UInt8])] = []
        var failing = false

        func write(_ source: UnsafeRawPointer, _ count: Int, _ offset: Int64) -> Int32 {
            writes.append((offset, Array(UnsafeRawBufferPointer(start: source, count: count))))
            return failing ? 10 : 0  // SQLITE_IOERR
        }
    }

    static func keep(_ bytes: [UInt8], at offset: Int64, _ gathered: inout GatheredLogWrites, _ recorder: Recorder)
        -> Int32
    {
        bytes.withUnsafeBytes {
            gathered.write($0.baseAddress!, amount: bytes.count, at: offset, through: recorder.write)
        }
    }

    @Test("writes that follow each other are one write when handed on; one that does not hands on what was kept first")
    func following() {
        var gathered = GatheredLogWrites(limit: 1 << 20, largestWrite: 1 << 16)
        let recorder = Recorder()
        #expect(Self.keep([1, 2, 3], at: 100, &gathered, recorder) == 0)
        #expect(Self.keep([4, 5], at: 103, &gathered, recorder) == 0)
        #expect(recorder.writes.isEmpty)
        #expect(Self.keep([9], at: 50, &gathered, recorder) == 0)
        #expect(recorder.writes.map(\.offset) == [100] && recorder.writes.first?.bytes == [1, 2, 3, 4, 5])
        #expect(gathered.handOn(recorder.write) == 0)
        #expect(recorder.writes.map(\.offset) == [100, 50] && recorder.writes.last?.bytes == [9])
        #expect(gathered.handOn(recorder.write) == 0 && recorder.writes.count == 2, "nothing kept: nothing written")
    }

    @Test(
        "what would pass the limit hands on first; more than the limit at once goes straight through; no write is longer than the largest"
    )
    func bounded() {
        var gathered = GatheredLogWrites(limit: 10, largestWrite: 4)
        let recorder = Recorder()
        #expect(Self.keep(Array(0..<8), at: 0, &gathered, recorder) == 0)
        #expect(recorder.writes.isEmpty)
        #expect(Self.keep(Array(8..<11), at: 8, &gathered, recorder) == 0)
        #expect(recorder.writes.map(\.offset) == [0, 4] && recorder.writes.flatMap(\.bytes) == Array(0..<8))
        #expect(Self.keep(Array(repeating: 7, count: 12), at: 11, &gathered, recorder) == 0)
        #expect(recorder.writes.map(\.offset) == [0, 4, 8, 11])
        #expect(recorder.writes[2].bytes == [8, 9, 10] && recorder.writes[3].bytes.count == 12)
    }

    @Test("a failed write answers its error and the bytes are not written again behind SQLite's back")
    func failure() {
        var gathered = GatheredLogWrites(limit: 1 << 20, largestWrite: 2)
        let recorder = Recorder()
        #expect(Self.keep([1, 2, 3, 4, 5], at: 0, &gathered, recorder) == 0)
        recorder.failing = true
        #expect(gathered.handOn(recorder.write) == 10)
        #expect(recorder.writes.count == 1, "the first chunk failed: the rest is not tried")
        recorder.failing = false
        #expect(gathered.handOn(recorder.write) == 0 && recorder.writes.count == 1)
    }

    @Test("each commit is in the log file when it returns: a reader, another connection, counts it at once")
    func readerSeesEachCommit() async throws {
        try await Self.withFileLedger { database, _ in
            try await database.transaction { db in
                try await db.raw("CREATE TABLE gl_row (id INTEGER PRIMARY KEY, body BLOB NOT NULL)").run()
            }
            for index in 1...20 {
                try await database.transaction { db in
                    try await db.raw("INSERT INTO gl_row (id, body) VALUES (\(bind: index), \(bind: Data(count: 100)))")
                        .run()
                }
                let seen = try await database.read { db in
                    try await db.raw("SELECT count(*) AS n FROM gl_row").first()
                }
                #expect(try seen?.decode(column: "n", as: Int.self) == index)
            }
        }
    }

    @Test("the writer opens the ledger through the gathering VFS; readers through SQLite's own")
    func writerOnly() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gathered-\(UUID().uuidString).sqlite")
            .path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let writer = try PreparedSQLiteConnection(path: path, writer: true, logger: .init(label: "test"))
        let reader = try PreparedSQLiteConnection(path: path, writer: false, logger: .init(label: "test"))
        #expect(writer.vfsName == GatheringLogVFS.name)
        #expect(reader.vfsName == "unix")
        writer.close()
        reader.close()
    }

    /// A new ledger file at a temporary path, removed after `body`; `body`'s second argument shuts the ledger down
    /// and opens the file again.
    static func withFileLedger(
        _ body: (LedgerDatabase, () async throws -> LedgerDatabase) async throws -> Void
    ) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gathered-\(UUID().uuidString).sqlite")
            .path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let database = try LedgerDatabase(url: .sqliteFile(path: path), logger: .init(label: "test"))
        var open = true
        do {
            try await body(database) {
                try await database.shutdown()
                open = false
                return try LedgerDatabase(url: .sqliteFile(path: path), logger: .init(label: "test"))
            }
            if open { try await database.shutdown() }
        } catch {
            if open { try? await database.shutdown() }
            throw error
        }
    }

    @Test(
        "a commit of many pages, some spilled from the writer's cache and written again before it, is whole to a reader at once and after the ledger is opened again"
    )
    func wholeCommits() async throws {
        try await Self.withFileLedger { database, reopen in
            try await database.transaction { db in
                try await db.raw("CREATE TABLE gl_row (id INTEGER PRIMARY KEY, body BLOB NOT NULL)").run()
                // A cache of ten pages: a commit of hundreds spills pages into the log before it ends, and SQLite
                // rewrites a spilled page's frame when the page changes again (reading the frames back for checksums).
                try await db.raw("PRAGMA cache_size = 10").run()
            }
            var expected = 0
            for round in 0..<4 {
                try await database.transaction { db in
                    for index in 0..<300 {
                        let body = Data(repeating: UInt8(truncatingIfNeeded: round * 7 + index), count: 1_500)
                        try await db.raw(
                            "INSERT INTO gl_row (id, body) VALUES (\(bind: round * 1_000 + index), \(bind: body))"
                        ).run()
                    }
                    try await db.raw("UPDATE gl_row SET body = zeroblob(1600) WHERE id % 3 = 0").run()
                }
                expected += 300
                let seen = try await database.read { db in
                    try await db.raw("SELECT count(*) AS n FROM gl_row").first()
                }
                #expect(try seen?.decode(column: "n", as: Int.self) == expected)
            }
            let reopened = try await reopen()
            let check = try await reopened.read { db in try await db.raw("PRAGMA integrity_check").first() }
            let count = try await reopened.read { db in
                try await db.raw("SELECT count(*) AS n, sum(length(body)) AS bytes FROM gl_row").first()
            }
            try await reopened.shutdown()
            #expect(try check?.decode(column: "integrity_check", as: String.self) == "ok")
            #expect(try count?.decode(column: "n", as: Int.self) == 1_200)
            #expect(try count?.decode(column: "bytes", as: Int.self) == 400 * 1_600 + 800 * 1_500)
        }
    }
}
