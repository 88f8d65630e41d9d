import Foundation
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import SQLiteKit
import Testing

@testable import Ledger

/// The ledger's statements are made ready for their database as they are written (``LedgerSQL``) instead of being
/// serialised by SQLKit at each execution: what SQLite runs, and what PostgreSQL is sent, must be what SQLKit made of
/// the same statement written as an `SQLQueryString` — the same text, the same values.
@Suite("Ledger: statements written ready for their database")
struct LedgerSQLTests {
    /// A database that only lends its dialect to a serializer.
    struct DialectOnly: SQLDatabase {
        let dialect: any SQLDialect
        var logger: Logger { Logger(label: "test") }
        var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }
        func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
            -> EventLoopFuture<Void>
        {
            eventLoop.makeFailedFuture(LedgerError.closed)
        }
    }

    static let sqlite = DialectOnly(dialect: SQLiteDialect())
    static let postgres = DialectOnly(dialect: PostgresDialect())

    enum Kind: String { case submission, notify }

    /// Each statement twice: as the ledger writes it, and as the `SQLQueryString` SQLKit serialised before.
    static func pairs() -> [(LedgerSQL, SQLQueryString)] {
        let id: Int64 = 42
        let missing: String? = nil
        let amount: Int? = 600
        let body = Data([0x7B, 0x00, 0x7D])
        let inner: LedgerSQL = "SELECT id FROM orders WHERE user_id = \(bind: "u-1") AND status = \(literal: "it's")"
        let innerKit: SQLQueryString =
            "SELECT id FROM orders WHERE user_id = \(bind: "u-1") AND status = \(literal: "it's")"
        let rows: [LedgerSQL] = (0..<3).map { "(\(bind: $0), \(bind: "e-\($0)"), \(bind: Data([UInt8($0)])))" }
        let rowsKit: [SQLQueryString] = (0..<3).map { "(\(bind: $0), \(bind: "e-\($0)"), \(bind: Data([UInt8($0)])))" }
        return [
            (
                "INSERT INTO inbox (kind, body, sha, at) VALUES (\(bind: Kind.submission.rawValue), \(bind: body), \(bind: missing), \(bind: id)) RETURNING id",
                "INSERT INTO inbox (kind, body, sha, at) VALUES (\(bind: Kind.submission.rawValue), \(bind: body), \(bind: missing), \(bind: id)) RETURNING id"
            ),
            (
                "WITH stored AS (\(inner)) SELECT (SELECT id FROM stored), \(bind: amount), \(bind: true), \(bind: Int64?.none), \(bind: Bool?.some(false))",
                "WITH stored AS (\(innerKit)) SELECT (SELECT id FROM stored), \(bind: amount), \(bind: true), \(bind: Int64?.none), \(bind: Bool?.some(false))"
            ),
            (
                LedgerSQL("INSERT INTO events (n, e, b) VALUES ") + rows.joined(separator: ", "),
                SQLQueryString("INSERT INTO events (n, e, b) VALUES ") + rowsKit.joined(separator: ", ")
            ),
            (
                "SELECT * FROM o WHERE k IN (\(literals: [Kind.submission, .notify], joinedBy: ", ")) AND \(ident: "we\"ird") = \(bind: "?") LIMIT \(literal: 10)",
                "SELECT * FROM o WHERE k IN (\(literals: ["submission", "notify"], joinedBy: ", ")) AND \(ident: "we\"ird") = \(bind: "?") LIMIT \(literal: 10)"
            ),
            // A chain of sums: values on both sides of a `+` (the left one's list grown), and text without values
            // before a statement with them (its list taken whole, then moved along by the text before it).
            (
                "UPDATE t SET a = \(bind: 1)" + ", b = \(bind: "x")" + " WHERE " + "c = \(bind: Int64(3)) AND d IN ("
                    + rows.joined(separator: ", ") + ")",
                SQLQueryString("UPDATE t SET a = \(bind: 1)") + ", b = \(bind: "x")" + " WHERE "
                    + "c = \(bind: Int64(3)) AND d IN (" + rowsKit.joined(separator: ", ") + ")"
            ),
            ("BEGIN IMMEDIATE", "BEGIN IMMEDIATE"),
            // Text that is not ASCII around the values, a combining accent right after one (the byte after `?` then
            // starts no character of its own).
            (
                "SELECT \(literal: "订单") AS \(ident: "名") WHERE a = \(bind: "é")\u{301} OR b = \(bind: 2)",
                "SELECT \(literal: "订单") AS \(ident: "名") WHERE a = \(bind: "é")\u{301} OR b = \(bind: 2)"
            ),
            (
                "SELECT \(unsafeRaw: "a, b") FROM t WHERE x IN (\(binds: ["p", "q"])) AND y = \(bind: UUID(uuidString: "6F9619FF-8B86-D011-B42D-00CF4FC964FF")!)",
                "SELECT \(unsafeRaw: "a, b") FROM t WHERE x IN (\(binds: ["p", "q"])) AND y = \(bind: UUID(uuidString: "6F9619FF-8B86-D011-B42D-00CF4FC964FF")!)"
            ),
        ]
    }

    @Test("SQLite runs the text and values SQLKit made of the same statement, its parameters unnumbered")
    func sameForSQLite() throws {
        for (ledger, kit) in Self.pairs() {
            let (sql, binds) = Self.sqlite.serialize(kit)
            // SQLiteKit numbers its parameters (`?1`, `?2`…); a bare `?` takes the next number, the same one. (By
            // scalars: a digit with a combining accent after it is one character.)
            #expect(ledger.sqliteText == sql.replacing(#/\?[0-9]+/#.matchingSemantics(.unicodeScalar), with: "?"))
            let values = try (0..<ledger.valueCount).map(ledger.sqliteValue(at:))
            #expect(try values.map(\.data) == binds.map(PreparedSQLiteConnection.sqliteData), "\(sql)")
        }
    }

    @Test("PostgreSQL is sent what SQLKit made of it: its numbered parameters, the values as written")
    func sameForPostgres() {
        for (ledger, kit) in Self.pairs() {
            let (sql, binds) = Self.postgres.serialize(ledger)
            let (expectedSQL, expectedBinds) = Self.postgres.serialize(kit)
            #expect(sql == expectedSQL)
            #expect(binds.map { "\(type(of: $0)) \($0)" } == expectedBinds.map { "\(type(of: $0)) \($0)" })
            // What the ledger's PostgreSQL connections send without a serializer is the same.
            #expect(ledger.postgresText() == expectedSQL)
            #expect(ledger.boundValues.map { "\(type(of: $0)) \($0)" } == binds.map { "\(type(of: $0)) \($0)" })
        }
    }

    @Test("values come back as they went in through the writer and a reader: NULLs, bytes, the integers' ends, text")
    func roundTrip() async throws {
        let database = try LedgerDatabase(url: .sqliteMemory, logger: .init(label: "test"))
        try await database.withSession { db in
            try await db.sql("CREATE TABLE v (id INTEGER PRIMARY KEY, t TEXT, b BLOB, i INTEGER, f INTEGER)").run()
        }
        let cases: [(String?, Data?, Int64?, Bool)] = [
            ("", Data(), Int64.max, true), ("订单 ✓ '?'", Data([0, 1, 0]), Int64.min, false), (nil, nil, nil, true),
        ]
        for (index, (text, bytes, integer, flag)) in cases.enumerated() {
            try await database.transaction { db in
                try await db.sql(
                    "INSERT INTO v VALUES (\(bind: index), \(bind: text), \(bind: bytes), \(bind: integer), \(bind: flag))"
                ).run()
            }
        }
        for (index, expected) in cases.enumerated() {
            let query: LedgerSQL = "SELECT t, b, i, f FROM v WHERE id = \(bind: index)"
            let fromWriter = try await database.transaction { db in try await db.sql(query).first() }
            let fromReader = try await database.read { db in try await db.sql(query).first() }
            for row in [fromWriter, fromReader] {
                let row = try #require(row)
                #expect(try row.decode(column: "t", as: String?.self) == expected.0)
                #expect(try row.decode(column: "b", as: Data?.self) == expected.1)
                #expect(try row.decode(column: "i", as: Int64?.self) == expected.2)
                #expect(try row.decode(column: "f", as: Bool.self) == expected.3)
            }
        }
        try await database.shutdown()
    }
}

extension SQLiteValue {
    /// The value as SQLiteKit's `SQLiteData` holds it: what SQLite is given either way.
    fileprivate var data: SQLiteData {
        switch self {
        case .encoded(let data): data
        case .bound(.null): .null
        case .bound(.bool(let flag)): .integer(flag ? 1 : 0)
        case .bound(.integer(let integer)): .integer(Int(integer))
        case .bound(.text(let text)): .text(text)
        case .bound(.bytes(let bytes)): .blob(ByteBuffer(data: bytes))
        }
    }
}
