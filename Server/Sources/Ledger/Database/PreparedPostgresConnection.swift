import Foundation
import Logging
import NIOCore
import PostgresKit
import SQLKit
import Synchronization

/// A pooled PostgreSQL connection whose statements are prepared once per connection (a named statement, PostgreSQL's
/// plan cache behind it) and then run with one Bind/Execute each. Through postgres-kit every statement was sent
/// unnamed, so PostgreSQL parsed, analysed and planned it again on every execution: a third of its CPU under load.
///
/// A statement is prepared without parameter types; PostgreSQL infers them (an `INTEGER` column's parameter is
/// `int4`), and each value is encoded for the type inferred. A statement with a parameter of another type than
/// those the ledger uses, and statements other than `SELECT`, `INSERT`, `UPDATE`, `DELETE` and `WITH` (transaction
/// control, DDL), run unnamed as before. Named statements live in the session: a pooler in transaction mode between
/// the server and PostgreSQL must support protocol-level prepared statements (PgBouncer ≥ 1.21).
struct PreparedPostgresConnection: SQLDatabase {
    let connection: PostgresConnection
    let statements: PreparedPostgresStatements
    var logger: Logger { connection.logger }
    var eventLoop: any EventLoop { connection.eventLoop }
    var dialect: any SQLDialect { PostgresDialect() }
    var version: (any SQLDatabaseReportedVersion)? { nil }
    var queryLogLevel: Logger.Level? { .trace }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        // A ledger statement is looked up by the text it was written as (its PostgreSQL text is made only to prepare
        // it); anything else is serialised first.
        let statement: PreparedPostgresStatement?
        let bound: [BoundValue]?
        if let ledger = query as? LedgerSQL {
            statement = try await statements.prepared(.ledger(ledger.sqliteText), on: connection) {
                ledger.postgresText()
            }
            bound = statement == nil ? nil : try ledger.postgresValues()
        } else {
            let (sql, binds) = serialize(query)
            statement = try await statements.prepared(.serialized(sql), on: connection) { sql }
            bound = statement == nil ? nil : try binds.map(PostgresParameter.bound(of:))
        }
        // Unnamed when not worth a name, past the limit, with a type not encoded here, or when the values do not
        // match the parameters PostgreSQL found (it then answers the unnamed statement with its own error).
        guard let statement, let bound, bound.count == statement.parameterTypes.count else {
            return try await connection.sql(queryLogLevel: .trace).execute(sql: query, onRow)
        }
        let parameters = try PostgresParameter.encode(bound, as: statement.parameterTypes)
        // Each row handed on as it arrives: no array of the rows, lock around it, and future mapped from it.
        try await statement.query.execute(parameters) { row in onRow(PreparedPostgresRow(row)) }.get()
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<
        Void
    > {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    /// Data statements are prepared, and the `BEGIN` and `COMMIT` every transaction runs (unnamed, each was sent
    /// with its Parse and Describe and answered with its description: 4.6% of a replica's samples); everything else
    /// (ROLLBACK, SAVEPOINT, SET, DDL) is not worth a name. PostgreSQL binds a prepared `COMMIT` in a failed
    /// transaction too (`exec_bind_message` lets a transaction's exit through), where it rolls back.
    static func isPreparable(_ sql: String) -> Bool {
        let firstWord = String(decoding: sql.utf8.prefix { $0 >= 0x41 && $0 <= 0x7A }.map { $0 | 0x20 }, as: UTF8.self)
        return ["select", "insert", "update", "delete", "with", "begin", "commit"].contains(firstWord)
    }
}

/// A statement prepared on one connection, with the parameter types PostgreSQL inferred for it.
struct PreparedPostgresStatement: Sendable {
    let query: PreparedQuery
    let parameterTypes: [PostgresDataType]
}

/// The statements prepared on each open connection of a pool, forgotten when the connection closes.
final class PreparedPostgresStatements: Sendable {
    /// What a statement is known by: a ledger statement by the text it was written as (with `?` for its values; a `?`
    /// outside quotes is a value to SQLite as well, so the text says where the values are), anything else by its
    /// serialised text.
    enum Key: Hashable, Sendable {
        case ledger(String)
        case serialized(String)
    }

    /// Per connection, per key: the statement, or nil for one that runs unnamed (a parameter of a type not encoded
    /// here).
    private let byConnection = Mutex<[ObjectIdentifier: [Key: PreparedPostgresStatement?]]>([:])
    /// How many statements one connection keeps; past it, new texts run unnamed.
    let limit: Int

    init(limit: Int = 512) {
        self.limit = limit
    }

    /// The statement known as `key` on `connection`, its text `sql()`: prepared on first use (two more round trips:
    /// the statement, then the types PostgreSQL inferred), kept after; nil when it runs unnamed.
    func prepared(_ key: Key, on connection: PostgresConnection, sql: () -> String) async throws
        -> PreparedPostgresStatement?
    {
        let id = ObjectIdentifier(connection)
        let (known, count) = byConnection.withLock { ($0[id]?[key], $0[id]?.count ?? 0) }
        if let known { return known }
        guard count < limit else { return nil }
        // A text not worth a name is not kept either (a migration's hundreds of DDL statements would use up the limit).
        let text = sql()
        guard PreparedPostgresConnection.isPreparable(text) else { return nil }
        let query = try await connection.prepare(query: text).get()
        let types = try await Self.parameterTypes(of: text, on: connection)
        let statement =
            types.allSatisfy(PostgresParameter.encodes)
            ? PreparedPostgresStatement(query: query, parameterTypes: types) : nil
        let isFirst = byConnection.withLock { all in
            defer { all[id, default: [:]][key] = .some(statement) }
            return all[id] == nil
        }
        if isFirst {
            connection.closeFuture.whenComplete { [weak self] _ in
                _ = self?.byConnection.withLock { $0.removeValue(forKey: id) }
            }
        }
        return statement
    }

    /// The parameter types PostgreSQL inferred for the statement just prepared from `sql` on `connection`.
    private static func parameterTypes(of sql: String, on connection: PostgresConnection) async throws
        -> [PostgresDataType]
    {
        let rows = try await connection.query(
            """
            SELECT t.oid::int8 AS oid FROM pg_prepared_statements p, unnest(p.parameter_types::oid[]) WITH ORDINALITY AS t(oid, n)
            WHERE p.name = (SELECT name FROM pg_prepared_statements WHERE statement = \(sql) ORDER BY prepare_time DESC LIMIT 1)
            ORDER BY t.n
            """, logger: connection.logger)
        var types: [PostgresDataType] = []
        for try await oid in rows.decode(Int64.self) {
            types.append(PostgresDataType(UInt32(truncatingIfNeeded: oid)))
        }
        return types
    }
}

/// A row of a prepared statement. postgres-nio asks for every result column in binary format but labels the cells
/// of a statement prepared through `prepare(query:)` with the text format its description came with: the cells are
/// read as the binary they are.
struct PreparedPostgresRow: SQLRow {
    private let cells: [PostgresCell]

    init(_ row: PostgresRow) {
        cells = row.map { cell in
            var cell = cell
            cell.format = .binary
            return cell
        }
    }

    var allColumns: [String] { cells.map(\.columnName) }

    func contains(column: String) -> Bool { cells.contains { $0.columnName == column } }

    func decodeNil(column: String) throws -> Bool { try cell(column).bytes == nil }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        let cell = try cell(column)
        return try Self.plain(cell, as: D.self) ?? Self.decodedGenerically(cell, as: D.self)
    }

    /// Any decodable type postgres-nio decodes, through a cast of `D` to `PostgresDecodable`.
    static func decodedGenerically<D>(_ cell: PostgresCell, as type: D.Type) throws -> D {
        guard let decodable = D.self as? any PostgresDecodable.Type else {
            throw PostgresStatementError.undecodable(cell.columnName, D.self)
        }
        func decode<T: PostgresDecodable>(_: T.Type) throws -> Any { try cell.decode(T.self) }
        guard let value = try decode(decodable) as? D else {
            throw PostgresStatementError.undecodable(cell.columnName, D.self)
        }
        return value
    }

    /// The ledger's usual columns read by postgres-nio's decoder for the type itself: text as `String`, an integer as
    /// `Int64` or `Int`, a boolean as `Bool`, and optionals of them, without the cast of `D` to `PostgresDecodable`
    /// (a lookup in the runtime's conformance tables) and the unspecialised decoding behind it. Nil for any other type.
    static func plain<D>(_ cell: PostgresCell, as type: D.Type) throws -> D? {
        if D.self == String.self { return unsafeBitCast(try cell.decode(String.self), to: D.self) }
        if D.self == String?.self { return unsafeBitCast(try cell.decode(String?.self), to: D.self) }
        if D.self == Int64.self { return unsafeBitCast(try cell.decode(Int64.self), to: D.self) }
        if D.self == Int64?.self { return unsafeBitCast(try cell.decode(Int64?.self), to: D.self) }
        if D.self == Int.self { return unsafeBitCast(try cell.decode(Int.self), to: D.self) }
        if D.self == Int?.self { return unsafeBitCast(try cell.decode(Int?.self), to: D.self) }
        if D.self == Bool.self { return unsafeBitCast(try cell.decode(Bool.self), to: D.self) }
        if D.self == Bool?.self { return unsafeBitCast(try cell.decode(Bool?.self), to: D.self) }
        return nil
    }

    func cell(_ column: String) throws -> PostgresCell {
        guard let cell = cells.first(where: { $0.columnName == column }) else {
            throw PostgresStatementError.missingColumn(column)
        }
        return cell
    }
}

/// A bound value in PostgreSQL's binary format for the parameter's inferred type.
enum PostgresParameter {
    static func encodes(_ type: PostgresDataType) -> Bool {
        [.int2, .int4, .int8, .bool, .text, .varchar, .bpchar, .name, .bytea].contains(type)
    }

    /// A value SQLKit's serializer bound (or the ledger bound as any `Encodable`): the types bound most are read
    /// directly (a cast, where `Encodable` costs an encoder each).
    static func bound(of value: any Encodable & Sendable) throws -> BoundValue {
        switch value {
        case let text as String: return .text(text)
        case let integer as Int64: return .integer(integer)
        case let integer as Int: return .integer(Int64(integer))
        case let data as Data: return .bytes(data)
        case let bytes as [UInt8]: return .bytes(Data(bytes))
        case let uuid as UUID: return .text(uuid.uuidString.lowercased())
        default:
            let encoder = ScalarEncoder()
            try value.encode(to: encoder)
            guard let scalar = encoder.scalar else { throw PostgresStatementError.unsupported(type(of: value)) }
            return scalar
        }
    }

    /// `values` encoded for `types` (as many), all in one buffer: each value a slice of it, where a buffer each was
    /// an allocation each (postgres-nio copies them into the statement's message anyway).
    static func encode(_ values: [BoundValue], as types: [PostgresDataType]) throws -> [PostgresData] {
        var capacity = 0
        for value in values { capacity &+= size(of: value) }
        var buffer = ByteBufferAllocator().buffer(capacity: capacity)
        // Where each value ends in the buffer; -1 for a NULL. Sliced once everything is written: a slice taken
        // earlier would share the buffer's storage and make each later write copy it.
        var ends: [Int] = []
        ends.reserveCapacity(values.count)
        for (value, type) in zip(values, types) {
            ends.append(try write(value, as: type, into: &buffer) ? buffer.writerIndex : -1)
        }
        var encoded: [PostgresData] = []
        encoded.reserveCapacity(ends.count)
        var start = 0
        for (end, type) in zip(ends, types) {
            guard end >= 0 else {
                encoded.append(PostgresData(type: type, value: nil))
                continue
            }
            encoded.append(PostgresData(type: type, value: buffer.getSlice(at: start, length: end - start)))
            start = end
        }
        return encoded
    }

    /// About how many bytes `value` takes encoded (an integer sent as text may take more).
    private static func size(of value: BoundValue) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .integer: 8
        case .text(let text): text.utf8.count
        case .bytes(let bytes): bytes.count
        }
    }

    /// Appends `scalar` to `buffer` in the binary format of `type`; false, appending nothing, for NULL.
    private static func write(_ scalar: BoundValue, as type: PostgresDataType, into buffer: inout ByteBuffer) throws
        -> Bool
    {
        switch (scalar, type) {
        case (.null, _):
            return false
        case (.integer(let value), .int8):
            buffer.writeInteger(value)
        case (.integer(let value), .int4):
            guard let narrow = Int32(exactly: value) else { throw PostgresStatementError.outOfRange(value, type) }
            buffer.writeInteger(narrow)
        case (.integer(let value), .int2):
            guard let narrow = Int16(exactly: value) else { throw PostgresStatementError.outOfRange(value, type) }
            buffer.writeInteger(narrow)
        case (.bool(let value), .bool):
            buffer.writeInteger(UInt8(value ? 1 : 0))
        case (.text(let value), .text), (.text(let value), .varchar), (.text(let value), .bpchar),
            (.text(let value), .name):
            buffer.writeString(value)
        case (.integer(let value), .text), (.integer(let value), .varchar):
            buffer.writeString(String(value))
        case (.bytes(let value), .bytea):
            buffer.writeBytes(value)
        case (.text(let value), .bytea):
            buffer.writeString(value)
        default:
            throw PostgresStatementError.mismatch(scalar, type)
        }
        return true
    }
}

enum PostgresStatementError: Error, CustomStringConvertible {
    case unsupported(Any.Type)
    case outOfRange(Int64, PostgresDataType)
    case mismatch(BoundValue, PostgresDataType)
    case missingColumn(String)
    case undecodable(String, Any.Type)

    var description: String {
        switch self {
        case .unsupported(let type): "a value of type \(type) cannot be bound to a PostgreSQL statement parameter"
        case .outOfRange(let value, let type): "\(value) does not fit a parameter of type \(type)"
        case .mismatch(let scalar, let type): "a value \(scalar.kind) cannot be bound to a parameter of type \(type)"
        case .missingColumn(let column): "no column \(column) in the row"
        case .undecodable(let column, let type): "column \(column) cannot be read as \(type)"
        }
    }
}

/// Captures a single scalar value (or nil); anything with structure is refused.
private final class ScalarEncoder: Encoder, SingleValueEncodingContainer {
    /// The value once encoded.
    private(set) var scalar: BoundValue?
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RefusingContainer<Key>())
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { RefusingContainer<PlainKey>() }
    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() { scalar = .null }
    func encode(_ value: Bool) { scalar = .bool(value) }
    func encode(_ value: String) { scalar = .text(value) }
    func encode(_ value: Int) { scalar = .integer(Int64(value)) }
    func encode(_ value: Int8) { scalar = .integer(Int64(value)) }
    func encode(_ value: Int16) { scalar = .integer(Int64(value)) }
    func encode(_ value: Int32) { scalar = .integer(Int64(value)) }
    func encode(_ value: Int64) { scalar = .integer(value) }
    func encode(_ value: UInt) { scalar = Int64(exactly: value).map { .integer($0) } }
    func encode(_ value: UInt8) { scalar = .integer(Int64(value)) }
    func encode(_ value: UInt16) { scalar = .integer(Int64(value)) }
    func encode(_ value: UInt32) { scalar = .integer(Int64(value)) }
    func encode(_ value: UInt64) { scalar = Int64(exactly: value).map { .integer($0) } }
    func encode(_ value: Double) {}  // the ledger binds no floats: refused (nothing captured)
    func encode(_ value: Float) {}
    func encode<T: Encodable>(_ value: T) throws { try value.encode(to: self) }
}

private struct PlainKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { (stringValue, self.intValue) = ("\(intValue)", intValue) }
}

/// A container for structured values, which no parameter takes: encoding into it leaves nothing captured.
private struct RefusingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol, UnkeyedEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil(forKey key: Key) {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) {}
    mutating func encodeNil() {}
    mutating func encode<T: Encodable>(_ value: T) {}
    mutating func nestedContainer<N: CodingKey>(keyedBy keyType: N.Type, forKey key: Key) -> KeyedEncodingContainer<N> {
        KeyedEncodingContainer(RefusingContainer<N>())
    }
    mutating func nestedContainer<N: CodingKey>(keyedBy keyType: N.Type) -> KeyedEncodingContainer<N> {
        KeyedEncodingContainer(RefusingContainer<N>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { self }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder(forKey key: Key) -> any Encoder { ScalarEncoder() }
    mutating func superEncoder() -> any Encoder { ScalarEncoder() }
}
