import Foundation
import LedgerTestSupport
import PostgresKit
import SQLKit
import Testing

@testable import Ledger

/// PostgreSQL connections prepare each data statement once and encode values for the parameter types PostgreSQL
/// inferred: values must come back as they went in, a value must never be narrowed silently, a statement must be
/// prepared once per connection, and a connection keeps a bounded number of them.
@Suite("Ledger: PostgreSQL statements prepared once", .enabled(if: TestEngine.postgresURL != nil, "needs PostgreSQL"))
struct PreparedPostgresStatementTests {
    static func withTable(_ body: (LedgerDatabase) async throws -> Void) async throws {
        try await TestEngine.postgres.withLedger { database, _ in
            try await database.withSession { db in
                try await db.raw(
                    """
                    CREATE TABLE pp_value (id BIGINT PRIMARY KEY, label TEXT UNIQUE, data BYTEA, small INTEGER, big BIGINT, flag BOOLEAN)
                    """
                ).run()
            }
            try await body(database)
        }
    }

    @Test("an insert answers its row's id through RETURNING: the new row's, none when it did nothing")
    func insertedRowID() async throws {
        try await TestEngine.postgres.withLedger { database, _ in
            try await database.withSession { db in
                try await db.raw(
                    "CREATE TABLE pp_ids (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, label TEXT UNIQUE)"
                ).run()
            }
            func insert(_ label: String) async throws -> Int64? {
                try await database.transaction { db in
                    try await db.insertedID("INSERT INTO pp_ids (label) VALUES (\(bind: label)) ON CONFLICT DO NOTHING")
                }
            }
            #expect(try await insert("a") == 1)
            #expect(try await insert("b") == 2)
            #expect(try await insert("a") == nil)
        }
    }

    @Test("values come back as they went in, through writes and reads: integers, text, bytes, booleans and NULLs")
    func roundTrip() async throws {
        try await Self.withTable { database in
            let cases: [(String?, Data?, Int?, Int64?, Bool?)] = [
                ("", Data(), 0, 0, false),
                ("订单 ✓ 'quoted' \\x00", Data([0, 1, 0, 255]), Int(Int32.max), Int64.max, true),
                (nil, Data(repeating: 7, count: 70_000), Int(Int32.min), Int64.min, nil), ("x", nil, nil, nil, true),
            ]
            // Each case twice: as SQLKit serialises a statement (ids 0…), and as the ledger writes one (ids 10…).
            for (index, (label, data, small, big, flag)) in cases.enumerated() {
                try await database.transaction { db in
                    try await db.raw(
                        """
                        INSERT INTO pp_value (id, label, data, small, big, flag)
                        VALUES (\(bind: index), \(bind: label), \(bind: data), \(bind: small), \(bind: big), \(bind: flag))
                        """
                    ).run()
                    try await db.sql(
                        """
                        INSERT INTO pp_value (id, label, data, small, big, flag)
                        VALUES (\(bind: index + 10), \(bind: label.map { $0 + "/ledger" }), \(bind: data), \(bind: small),
                                \(bind: big), \(bind: flag))
                        """
                    ).run()
                }
            }
            for (index, expected) in cases.enumerated() {
                for id in [index, index + 10] {
                    let query: LedgerSQL = "SELECT label, data, small, big, flag FROM pp_value WHERE id = \(bind: id)"
                    let fromWriter = try await database.transaction { db in try await db.sql(query).first() }
                    let fromReader = try await database.read { db in try await db.sql(query).first() }
                    for row in [fromWriter, fromReader] {
                        let row = try #require(row)
                        let label = id < 10 ? expected.0 : expected.0.map { $0 + "/ledger" }
                        #expect(try row.decode(column: "label", as: String?.self) == label)
                        #expect(try row.decode(column: "data", as: Data?.self) == expected.1)
                        #expect(try row.decode(column: "small", as: Int?.self) == expected.2)
                        #expect(try row.decode(column: "big", as: Int64?.self) == expected.3)
                        #expect(try row.decode(column: "flag", as: Bool?.self) == expected.4)
                    }
                }
            }
        }
    }

    @Test("a value too large for an INTEGER parameter is refused, never cut to fit")
    func narrowing() async throws {
        try await Self.withTable { database in
            await #expect(throws: (any Error).self) {
                try await database.transaction { db in
                    try await db.raw(
                        "INSERT INTO pp_value (id, small) VALUES (\(bind: 1), \(bind: Int64(Int32.max) + 1))"
                    ).run()
                }
            }
            let rows = try await database.read { db in try await db.raw("SELECT id FROM pp_value").all().count }
            #expect(rows == 0)
        }
    }

    @Test(
        "a statement is prepared once per connection and answers each use with its own values, a failure in between included"
    )
    func reuse() async throws {
        try await Self.withTable { database in
            let prepared = try await database.withSession { db in
                try await db.raw("BEGIN").run()
                for n in 0..<200 {
                    let label = n % 50 == 49 ? "label-0" : "label-\(n)"  // every fiftieth breaks the unique label
                    var failed = false
                    do {
                        try await db.raw("SAVEPOINT one").run()
                        try await db.raw(
                            "INSERT INTO pp_value (id, label, big) VALUES (\(bind: n), \(bind: label), \(bind: n * 3))"
                        ).run()
                        try await db.raw("RELEASE SAVEPOINT one").run()
                    } catch {
                        failed = true
                        try await db.raw("ROLLBACK TO SAVEPOINT one").run()
                    }
                    #expect(failed == (n % 50 == 49))
                    let big = try await db.raw("SELECT big FROM pp_value WHERE id = \(bind: n)").first()?.decode(
                        column: "big", as: Int.self)
                    #expect(big == (failed ? nil : n * 3))
                }
                try await db.raw("COMMIT").run()
                return try await db.raw(
                    """
                    SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE 'SELECT big FROM pp_value%'
                    """
                ).first()?.decode(column: "n", as: Int.self)
            }
            #expect(prepared == 1)
            let count = try await database.read { db in
                try await db.raw("SELECT count(*) AS n FROM pp_value").first()?.decode(column: "n", as: Int.self)
            }
            #expect(count == 196)
        }
    }

    @Test(
        "a transaction's BEGIN and COMMIT are prepared once, and a COMMIT refused by a deferred constraint rolls back and leaves the connection usable"
    )
    func transactionControl() async throws {
        try await Self.withTable { database in
            let (children, named) = try await database.withSession { db in
                try await db.raw("CREATE TABLE pp_parent (id BIGINT PRIMARY KEY)").run()
                try await db.raw(
                    "CREATE TABLE pp_child (parent BIGINT REFERENCES pp_parent (id) DEFERRABLE INITIALLY DEFERRED)"
                ).run()
                for n in 0..<4 {
                    try await db.sql("BEGIN").run()
                    try await db.sql("INSERT INTO pp_child (parent) VALUES (\(bind: n))").run()
                    if n != 2 { try await db.sql("INSERT INTO pp_parent (id) VALUES (\(bind: n))").run() }
                    // The third's child has no parent: the constraint is checked at its COMMIT, which rolls it back.
                    if n == 2 {
                        await #expect(throws: (any Error).self) { try await db.sql("COMMIT").run() }
                    } else {
                        try await db.sql("COMMIT").run()
                    }
                }
                // A prepared COMMIT is bound in a failed transaction too, where it rolls back.
                try await db.sql("BEGIN").run()
                try await db.sql("INSERT INTO pp_parent (id) VALUES (\(bind: 100))").run()
                await #expect(throws: (any Error).self) {
                    try await db.sql("INSERT INTO pp_parent (id) VALUES (\(bind: 100))").run()
                }
                try await db.sql("COMMIT").run()
                let kept = try await db.sql("SELECT count(*) AS n FROM pp_parent WHERE id = 100").first()?.decode(
                    column: "n", as: Int.self)
                #expect(kept == 0)
                let children = try await db.sql("SELECT count(*) AS n FROM pp_child").first()?.decode(
                    column: "n", as: Int.self)
                let named = try await db.sql(
                    "SELECT count(*) AS n FROM pg_prepared_statements WHERE statement IN ('BEGIN', 'COMMIT')"
                ).first()?.decode(column: "n", as: Int.self)
                return (children, named)
            }
            #expect(children == 3)
            #expect(named == 2)
        }
    }

    @Test("the usual columns read directly are what postgres-nio's decoder makes of them, NULLs and both ends included")
    func plainColumns() async throws {
        try await Self.withTable { database in
            let rows = try await database.read { db in
                try await db.sql(
                    """
                    SELECT * FROM (VALUES ('订单 ✓'::text, 9223372036854775807::int8, '-2147483648'::int4, true),
                                          ('', '-9223372036854775808'::int8, 0::int4, false),
                                          (NULL, NULL, NULL, NULL)) AS v (t, b, s, f)
                    """
                ).all()
            }
            #expect(rows.count == 3)
            func same<D: Decodable & Equatable & PostgresDecodable>(_ row: any SQLRow, _ column: String, _: D.Type)
                throws -> Bool
            {
                let direct = try row.decode(column: column, as: D.self)
                let cell = try #require(row as? PreparedPostgresRow).cell(column)
                let decoded = try PreparedPostgresRow.decodedGenerically(cell, as: D.self)
                return direct == decoded
            }
            for row in rows {
                let nullRow = try row.decodeNil(column: "t")
                #expect(try same(row, "t", String?.self))
                #expect(try same(row, "b", Int64?.self))
                #expect(try same(row, "s", Int?.self))
                #expect(try same(row, "f", Bool?.self))
                if !nullRow {
                    #expect(try same(row, "t", String.self))
                    #expect(try same(row, "b", Int64.self))
                    #expect(try same(row, "b", Int.self))
                    #expect(try same(row, "s", Int64.self))
                    #expect(try same(row, "f", Bool.self))
                } else {
                    #expect(throws: (any Error).self) { try row.decode(column: "t", as: String.self) }
                }
            }
            #expect(try rows[0].decode(column: "t", as: String.self) == "订单 ✓")
            #expect(try rows[1].decode(column: "b", as: Int64.self) == .min)
            #expect(try rows[0].decode(column: "s", as: Int.self) == Int(Int32.min))
            #expect(try rows[0].decode(column: "f", as: Bool.self))
        }
    }

    @Test(
        "past 512 statements a connection runs new ones unnamed, DDL taking no place; a parameter of a type not encoded runs unnamed too"
    )
    func bounded() async throws {
        try await Self.withTable { database in
            let kept = try await database.withSession { db in
                // Statements not worth a name (DDL, as a migration runs hundreds) take none of the places.
                for n in 0..<20 { try await db.sql("CREATE TEMPORARY TABLE pp_t\(literal: n) (x INTEGER)").run() }
                let numeric = try await db.raw("SELECT CAST(\(bind: 41) AS NUMERIC)::int8 + 1 AS v").first()?.decode(
                    column: "v", as: Int64.self)
                #expect(numeric == 42)
                for n in 0..<700 {
                    let value = try await db.raw("SELECT \(bind: Int64(n)) + \(unsafeRaw: String(n)) AS v").first()?
                        .decode(column: "v", as: Int64.self)
                    #expect(value == Int64(2 * n))
                }
                return try await db.raw("SELECT count(*) AS n FROM pg_prepared_statements").first()?.decode(
                    column: "n", as: Int.self)
            }
            #expect(kept == 512)
        }
    }

    @Test("a statement given fewer values than it has parameters is refused, prepared or not")
    func bindCount() async throws {
        try await Self.withTable { database in
            try await database.transaction { db in
                try await db.raw("INSERT INTO pp_value (id, label) VALUES (1, 'a')").run()
            }
            let both = try await database.read { db in
                try await db.raw("SELECT label FROM pp_value WHERE id = \(bind: 1) AND label = \(bind: "a")").all()
                    .count
            }
            #expect(both == 1)
            // The same text (`… id = $1 AND label = $2`), with a value for $1 only.
            await #expect(throws: (any Error).self) {
                try await database.read { db in
                    try await db.raw("SELECT label FROM pp_value WHERE id = \(bind: 1) AND label = \(unsafeRaw: "$2")")
                        .all().count
                }
            }
        }
    }
}

/// A statement's values are encoded into one buffer, each a slice of it: each slice must hold its own value's bytes
/// and nothing of its neighbours', a NULL no bytes at all, an empty text an empty value (not a NULL).
@Suite("Ledger: PostgreSQL parameters encoded together")
struct PostgresParameterEncodingTests {
    @Test("each value is its own slice: NULL none, empty text empty, text grown past the first estimate whole")
    func slices() throws {
        let long = String(repeating: "订", count: 300)
        let values: [BoundValue] = [
            .integer(5), .null, .text(""), .text("单 'x'"), .bytes(Data([0, 255, 0])), .integer(-7), .bool(true),
            .integer(1_234_567_890_123), .text(long),
        ]
        let types: [PostgresDataType] = [.int8, .text, .text, .varchar, .bytea, .int4, .bool, .text, .text]
        let encoded = try PostgresParameter.encode(values, as: types)
        #expect(encoded.map(\.type) == types)
        let bytes = encoded.map { $0.value.map { Array($0.readableBytesView) } }
        #expect(bytes[0] == [0, 0, 0, 0, 0, 0, 0, 5])
        #expect(bytes[1] == nil)
        #expect(bytes[2] == [])
        #expect(bytes[3] == Array("单 'x'".utf8))
        #expect(bytes[4] == [0, 255, 0])
        #expect(bytes[5] == [255, 255, 255, 249])
        #expect(bytes[6] == [1])
        #expect(bytes[7] == Array("1234567890123".utf8))  // an integer sent as text: longer than its estimate
        #expect(bytes[8] == Array(long.utf8))
    }

    @Test("a value that does not fit its parameter's type is refused, whatever was encoded before it")
    func refusal() {
        #expect(throws: (any Error).self) {
            try PostgresParameter.encode([.text("a"), .integer(Int64(Int32.max) + 1)], as: [.text, .int4])
        }
        #expect(throws: (any Error).self) {
            try PostgresParameter.encode([.integer(1), .bool(true)], as: [.int8, .int8])
        }
    }
}
