import Foundation
import SQLKit
import SQLiteKit
import Testing

@testable import Ledger

/// SQLite's connections prepare each statement once and reuse it: a reused statement must carry only its own
/// values, a failed one must leave the connection usable, and values must come back as they went in.
@Suite("Ledger: SQLite statements prepared once")
struct PreparedStatementTests {
    static func database() async throws -> LedgerDatabase {
        let database = try LedgerDatabase(url: .sqliteMemory, logger: .init(label: "test"))
        try await database.withSession { db in
            try await db.raw(
                "CREATE TABLE ps_value (id INTEGER PRIMARY KEY, label TEXT UNIQUE, data BLOB, number INTEGER)"
            ).run()
        }
        return database
    }

    @Test("the writer keeps its statement journal in memory, never in a temporary file; readers keep SQLite's default")
    func statementJournalInMemory() async throws {
        let database = try await Self.database()
        let writer = try await database.transaction { db in try await db.raw("PRAGMA temp_store").first() }
        let reader = try await database.read { db in try await db.raw("PRAGMA temp_store").first() }
        #expect(try writer?.decode(column: "temp_store", as: Int.self) == 2)
        #expect(try reader?.decode(column: "temp_store", as: Int.self) == 0)
        try await database.shutdown()
    }

    @Test("a column read without the decoder reads as the decoder reads it, for every value and every type it takes")
    func plainColumnsAgreeWithTheDecoder() throws {
        let values: [SQLiteData] = [
            .text(""), .text("订单"), .text("12"), .integer(0), .integer(.max), .integer(.min), .null, .float(1.5),
            .blob(.init(bytes: [1, 2])),
        ]
        let decoder = SQLiteDataDecoder()
        func check<D: Decodable & Equatable>(_ type: D.Type, plainFor kinds: Set<String>) {
            for value in values {
                let kind =
                    switch value {
                    case .text: "text"
                    case .integer: "integer"
                    case .null: "null"
                    case .float: "float"
                    case .blob: "blob"
                    }
                let plain = PreparedSQLiteRow.plain(value, as: D.self)
                #expect((plain != nil) == kinds.contains(kind), "\(D.self) from \(value)")
                if let plain { #expect(plain == (try? decoder.decode(D.self, from: value)), "\(D.self) from \(value)") }
            }
        }
        check(String.self, plainFor: ["text"])
        check(String?.self, plainFor: ["text", "null"])
        check(Int64.self, plainFor: ["integer"])
        check(Int64?.self, plainFor: ["integer", "null"])
        check(Int.self, plainFor: ["integer"])
        check(Int?.self, plainFor: ["integer", "null"])
        check(Bool.self, plainFor: [])
        check(Double.self, plainFor: [])
    }

    @Test("values come back as they went in, through the writer and the readers: empty text and blob are not NULL")
    func roundTrip() async throws {
        let database = try await Self.database()
        let cases: [(String?, Data?, Int64?)] = [
            ("", Data(), 0), ("a\u{0}b", Data([0, 1, 0]), Int64.max), ("订单 ✓", nil, Int64.min),
            (nil, Data(repeating: 7, count: 70_000), nil),
        ]
        for (index, (label, data, number)) in cases.enumerated() {
            try await database.transaction { db in
                try await db.raw(
                    "INSERT INTO ps_value (id, label, data, number) VALUES (\(bind: index), \(bind: label), \(bind: data), \(bind: number))"
                ).run()
            }
        }
        for (index, expected) in cases.enumerated() {
            let query: SQLQueryString = "SELECT label, data, number FROM ps_value WHERE id = \(bind: index)"
            let fromWriter = try await database.transaction { db in try await db.raw(query).first() }
            let fromReader = try await database.read { db in try await db.raw(query).first() }
            for row in [fromWriter, fromReader] {
                let row = try #require(row)
                #expect(try row.decode(column: "label", as: String?.self) == expected.0)
                #expect(try row.decode(column: "data", as: Data?.self) == expected.1)
                #expect(try row.decode(column: "number", as: Int64?.self) == expected.2)
            }
        }
        try await database.shutdown()
    }

    @Test(
        "a bound value is what SQLiteKit's encoder makes of it, read directly or not: text, integers, optionals, bytes, booleans"
    )
    func boundValues() throws {
        let values: [any Encodable & Sendable] = [
            "", "订单 ✓", Int64.max, Int64.min, Int.max, 0, Optional<String>.some("x"), Optional<String>.none,
            Optional<Int64>.some(-1),
            Optional<Int64>.none, Data([0, 1, 0]), true, false, 2.5, Optional<Data>.none,
        ]
        let encoder = SQLiteDataEncoder()
        for value in values {
            #expect(try PreparedSQLiteConnection.sqliteData(value) == encoder.encode(value), "\(value)")
        }
    }

    @Test("a statement reused a thousand times answers each time with its own values, a failure in between included")
    func reuse() async throws {
        let database = try await Self.database()
        for n in 0..<1_000 {
            let label = n % 100 == 99 ? "label-0" : "label-\(n)"  // every hundredth breaks the unique label
            var failed = false
            do {
                try await database.transaction { db in
                    try await db.raw(
                        "INSERT INTO ps_value (id, label, number) VALUES (\(bind: n), \(bind: label), \(bind: n * 3))"
                    ).run()
                }
            } catch {
                failed = true
            }
            #expect(failed == (n % 100 == 99))
            let number = try await database.read { db in
                try await db.raw("SELECT number FROM ps_value WHERE id = \(bind: n)").first()?.decode(
                    column: "number", as: Int.self)
            }
            #expect(number == (n % 100 == 99 ? nil : n * 3))
        }
        let count = try await database.read { db in
            try await db.raw("SELECT count(*) AS n FROM ps_value").first()?.decode(column: "n", as: Int.self)
        }
        #expect(count == 990)
        try await database.shutdown()
    }

    @Test("a reused statement given fewer values than it has parameters is refused, not run with the last ones")
    func bindCount() async throws {
        let database = try await Self.database()
        try await database.transaction { db in
            try await db.raw("INSERT INTO ps_value (id, label) VALUES (1, 'a')").run()
        }
        let both = try await database.read { db in
            try await db.raw("SELECT label FROM ps_value WHERE id = \(bind: 1) AND label = \(bind: "a")").all().count
        }
        #expect(both == 1)
        // The same text (`… id = ?1 AND label = ?2`), with a value for ?1 only.
        await #expect(throws: (any Error).self) {
            try await database.read { db in
                try await db.raw("SELECT label FROM ps_value WHERE id = \(bind: 1) AND label = \(unsafeRaw: "?2")")
                    .all().count
            }
        }
        try await database.shutdown()
    }

    @Test("an insert answers its row's id without RETURNING: the new row's, none when it did nothing, an error for two")
    func insertedRowID() async throws {
        let database = try await Self.database()
        func insert(_ label: String) async throws -> Int64? {
            try await database.transaction { db in
                try await db.insertedID("INSERT INTO ps_value (label) VALUES (\(bind: label)) ON CONFLICT DO NOTHING")
            }
        }
        #expect(try await insert("a") == 1)
        #expect(try await insert("b") == 2)
        #expect(try await insert("a") == nil)  // the label is taken: nothing inserted, not the last row's id
        try await database.transaction { db in
            try await db.raw("DELETE FROM ps_value WHERE label = 'b'").run()
        }
        #expect(try await insert("a") == nil)  // the delete changed a row; this insert changed none
        let c = try await insert("c")
        let stored = try await database.read { db in
            try await db.raw("SELECT id FROM ps_value WHERE label = 'c'").first()?.decode(column: "id", as: Int64.self)
        }
        #expect(c != nil && c == stored)
        await #expect(throws: (any Error).self) {
            try await database.transaction { db in
                try await db.insertedID("INSERT INTO ps_value (label) VALUES ('d'), ('e')")
            }
        }
        let labels = try await database.read { db in
            try await db.raw("SELECT label FROM ps_value ORDER BY id").all()
                .map { try $0.decode(column: "label", as: String.self) }
        }
        #expect(labels == ["a", "c"])  // the write that inserted two failed whole
        try await database.shutdown()
    }

    @Test("a statement kept from before the schema changed names the columns it has now, not those it had")
    func columnsAfterSchemaChange() async throws {
        let database = try await Self.database()
        let select: SQLQueryString = "SELECT * FROM ps_value"
        try await database.transaction { db in
            try await db.raw("INSERT INTO ps_value (id, label) VALUES (1, 'a')").run()
        }
        let before = try await database.transaction { db in try await db.raw(select).first()?.allColumns }
        #expect(before == ["id", "label", "data", "number"])
        try await database.transaction { db in
            try await db.raw("ALTER TABLE ps_value RENAME COLUMN number TO amount").run()
        }
        let renamed = try await database.transaction { db in try await db.raw(select).first()?.allColumns }
        #expect(renamed == ["id", "label", "data", "amount"])
        try await database.transaction { db in
            try await db.raw("ALTER TABLE ps_value ADD COLUMN note TEXT DEFAULT 'n'").run()
        }
        let after = try await database.transaction { db in try await db.raw(select).first() }
        #expect(after?.allColumns == ["id", "label", "data", "amount", "note"])
        #expect(try after?.decode(column: "note", as: String.self) == "n")
        #expect(after?.contains(column: "number") == false)
        try await database.shutdown()
    }

    @Test("more distinct statements than are kept, and more concurrent reads than there are readers")
    func manyStatementsAndReaders() async throws {
        let database = try await Self.database()
        for n in 0..<700 {  // each text distinct: past the cache's 512, it starts again
            try await database.transaction { db in
                try await db.raw(
                    SQLQueryString(
                        "INSERT INTO ps_value (id, number) VALUES (\(unsafeRaw: "\(n)"), \(unsafeRaw: "\(n)"))")
                ).run()
            }
        }
        let sums = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<64 {
                group.addTask {
                    try await database.read { db in
                        try await db.raw("SELECT sum(number) AS s FROM ps_value WHERE id <= \(bind: n)").first()?
                            .decode(column: "s", as: Int.self) ?? -1
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(sums.sorted() == (0..<64).map { $0 * ($0 + 1) / 2 })
        try await database.shutdown()
    }
}
