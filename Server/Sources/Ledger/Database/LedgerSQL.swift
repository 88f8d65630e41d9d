import Foundation
import SQLKit
import SQLiteKit
import Synchronization

/// One of the ledger's statements with its values, written as an `SQLQueryString` is
/// (`"SELECT … WHERE id = \(bind: id)"`) and made ready for SQLite as it is written: its text with `?` for each
/// value, and each value read as it is written (``BoundValue``). The ledger's SQLite connections run it as it stands
/// (``PreparedSQLiteConnection``): SQLKit serialises an `SQLQueryString` anew at every execution, walking its
/// fragments and casting each value from an existential, and that Swift around the statements cost more of the
/// writer's time than SQLite's own code (docs/benchmarks.md). The ledger's PostgreSQL connections take its text with
/// numbered parameters (``postgresText()``) and its values as written, encoding each for the type PostgreSQL inferred;
/// any other database serialises it as the `SQLExpression` it also is.
///
/// Only text the ledger wrote goes in unbound (`unsafeRaw:`, `literal:`, `ident:`); everything else is a value.
struct LedgerSQL: SQLExpression, ExpressibleByStringInterpolation, Sendable {
    /// The text as SQLite reads it: `?` for each value.
    private(set) var sqliteText: String
    /// Each value with its `?` in ``sqliteText``, in order (one array, so that a statement is small enough to travel
    /// as an `any SQLExpression` without a box of its own: with three, the statements' text and values made an eighth
    /// of a submission's allocations).
    private var parameters: [Parameter]

    /// A value and where its `?` is.
    fileprivate struct Parameter {
        /// The UTF-8 offset of the value's `?` in ``sqliteText``.
        var offset: Int
        var value: Value

        /// Appends `source`'s parameters to `list`, each offset moved by `shift` (where their text begins), leaving
        /// `source` empty. Into an empty list without room for them (a statement appended to text without values:
        /// `"INSERT INTO t " + values`) the list is taken whole, its values neither copied nor retained; otherwise
        /// the list grows by doubling. Each sum copied its values into a list reserved to the exact count, 17 times
        /// a fresh submission (its order's insert is five sums over fifteen values): 14,600 of its instructions.
        static func move(_ source: inout [Parameter], to list: inout [Parameter], shiftedBy shift: Int) {
            guard !source.isEmpty else { return }
            guard !list.isEmpty || list.capacity >= source.count else {
                swap(&source, &list)
                if shift != 0 {
                    for index in list.indices { list[index].offset += shift }
                }
                return
            }
            let count = list.count + source.count
            if list.capacity < count { list.reserveCapacity(Swift.max(count, list.capacity * 2)) }
            for var parameter in source {
                parameter.offset += shift
                list.append(parameter)
            }
            source = []
        }
    }

    /// A value as written: one of the types the ledger binds, kept as that type (SQLKit's serializer is given the
    /// very value), or any other `Encodable`, read at the execution. A case per type, not an `any Encodable` beside
    /// what was read of it: copying and destroying a parameter retains or releases one reference, with no call
    /// through a value witness table (the existential's copies were 3% of the writer's samples, and a parameter is
    /// 32 bytes instead of 72).
    fileprivate enum Value {
        case text(String)
        case optionalText(String?)
        case int(Int)
        case optionalInt(Int?)
        case int64(Int64)
        case optionalInt64(Int64?)
        case bool(Bool)
        case optionalBool(Bool?)
        case data(Data)
        case optionalData(Data?)
        case encodable(EncodableValue)

        /// The value as written.
        var written: any Encodable & Sendable {
            switch self {
            case .text(let value): value
            case .optionalText(let value): value
            case .int(let value): value
            case .optionalInt(let value): value
            case .int64(let value): value
            case .optionalInt64(let value): value
            case .bool(let value): value
            case .optionalBool(let value): value
            case .data(let value): value
            case .optionalData(let value): value
            case .encodable(let box): box.value
            }
        }

        /// The value read, for SQLite and PostgreSQL alike; nil where only an encoder knows how.
        var bound: BoundValue? {
            switch self {
            case .text(let value): .text(value)
            case .optionalText(let value): value.map { .text($0) } ?? .null
            case .int(let value): .integer(Int64(value))
            case .optionalInt(let value): value.map { .integer(Int64($0)) } ?? .null
            case .int64(let value): .integer(value)
            case .optionalInt64(let value): value.map { .integer($0) } ?? .null
            case .bool(let value): .bool(value)
            case .optionalBool(let value): value.map { .bool($0) } ?? .null
            case .data(let value): .bytes(value)
            case .optionalData(let value): value.map { .bytes($0) } ?? .null
            case .encodable: nil
            }
        }
    }

    /// Any other value, boxed so that a ``Value`` stays small.
    fileprivate final class EncodableValue: Sendable {
        let value: any Encodable & Sendable

        init(_ value: any Encodable & Sendable) {
            self.value = value
        }
    }

    init(_ text: String) {
        sqliteText = text
        parameters = []
    }

    /// The literal's text. A literal is a `StaticString`, so that each of an interpolation's literal pieces is
    /// appended from its bytes where it lies (a `String`'s were copied through its UTF-8 view, retained and released:
    /// 190 instructions a piece, 88 pieces a fresh submission).
    init(stringLiteral value: StaticString) {
        self.init(value.description)
    }

    init(stringInterpolation: StringInterpolation) {
        self = stringInterpolation.statement.written
    }

    fileprivate init(sqliteText: String, parameters: [Parameter]) {
        self.sqliteText = sqliteText
        self.parameters = parameters
    }

    /// How many values the statement binds.
    var valueCount: Int { parameters.count }

    /// The value at `index` (0 to ``valueCount`` - 1) as SQLite binds it.
    func sqliteValue(at index: Int) throws -> SQLiteValue {
        let value = parameters[index].value
        if let bound = value.bound { return .bound(bound) }
        return .encoded(try PreparedSQLiteConnection.sqliteData(value.written))
    }

    /// The text as PostgreSQL reads it: `$1`, `$2`… for the values in order, as SQLKit's PostgreSQL dialect numbers
    /// them (without walking a serializer at each execution: 2.4% of a PostgreSQL replica's samples did).
    func postgresText() -> String {
        guard !parameters.isEmpty else { return sqliteText }
        var text = ""
        text.reserveCapacity(sqliteText.utf8.count + parameters.count * 3)
        let utf8 = sqliteText.utf8
        var start = utf8.startIndex
        for (index, parameter) in parameters.enumerated() {
            let placeholder = utf8.index(utf8.startIndex, offsetBy: parameter.offset)
            text += sqliteText[start..<placeholder]
            text += "$"
            text += String(index + 1)
            start = utf8.index(after: placeholder)
        }
        text += sqliteText[start...]
        return text
    }

    /// The values as written, in order (what SQLKit's serializer is given).
    var boundValues: [any Encodable & Sendable] { parameters.map(\.value.written) }

    /// The values in order as PostgreSQL's parameters take them (each then encoded for the type PostgreSQL inferred).
    func postgresValues() throws -> [BoundValue] {
        try parameters.map { try $0.value.bound ?? PostgresParameter.bound(of: $0.value.written) }
    }

    func serialize(to serializer: inout SQLSerializer) {
        let text = sqliteText.utf8
        var start = text.startIndex
        for parameter in parameters {
            let placeholder = text.index(text.startIndex, offsetBy: parameter.offset)
            serializer.write(String(decoding: text[start..<placeholder], as: UTF8.self))
            serializer.write(bind: parameter.value.written)
            start = text.index(after: placeholder)
        }
        serializer.write(String(decoding: text[start...], as: UTF8.self))
    }

    fileprivate mutating func append(_ text: String) {
        sqliteText += text
    }

    fileprivate mutating func append(_ other: consuming LedgerSQL) {
        Parameter.move(&other.parameters, to: &parameters, shiftedBy: sqliteText.utf8.count)
        sqliteText += other.sqliteText
    }

    /// Makes room for `count` more bytes of text and `values` more values.
    private mutating func reserve(text count: Int, values: Int) {
        sqliteText.reserveCapacity(sqliteText.utf8.count + count)
        parameters.reserveCapacity(parameters.count + values)
    }

    /// Makes room for `statements` with `separator` between each two.
    fileprivate mutating func reserve(for statements: some Collection<LedgerSQL>, separator: String) {
        let text = statements.reduce(0) { $0 + $1.sqliteText.utf8.count }
        let values = statements.reduce(0) { $0 + $1.parameters.count }
        reserve(text: text + max(0, statements.count - 1) * separator.utf8.count, values: values)
    }

    /// `lhs` then `rhs`. `lhs` is consumed, so in a chain (`a + b + c`) each sum after the first is the one before it,
    /// grown in place, not copied into a new one.
    static func + (lhs: consuming LedgerSQL, rhs: consuming LedgerSQL) -> LedgerSQL {
        lhs.append(rhs)
        return lhs
    }

    static func += (lhs: inout LedgerSQL, rhs: consuming LedgerSQL) {
        lhs.append(rhs)
    }

    /// A string literal as both dialects write one: in single quotes, each quote doubled.
    fileprivate static func quoted(_ text: String, by quote: String) -> String {
        quote + text.replacingOccurrences(of: quote, with: quote + quote) + quote
    }

    /// A statement being written: its text in bytes, made a `String` once it is written. Appending a literal to an
    /// array copies its bytes; appending it to a `String` also checks the string's capacity, uniqueness and flags, and
    /// the ~190 appends of a fresh submission's statements were 2.8% of its instructions.
    fileprivate struct Writing {
        private var text: [UInt8]
        private var parameters: [Parameter]

        init(text count: Int, values: Int) {
            text = []
            text.reserveCapacity(count)
            parameters = []
            parameters.reserveCapacity(values)
        }

        mutating func append(_ text: String) {
            self.text.append(contentsOf: text.utf8)
        }

        mutating func append(_ literal: StaticString) {
            literal.withUTF8Buffer { text.append(contentsOf: $0) }
        }

        mutating func append(_ value: Value) {
            parameters.append(Parameter(offset: text.count, value: value))
            text.append(UInt8(ascii: "?"))
        }

        mutating func append(_ other: consuming LedgerSQL) {
            Parameter.move(&other.parameters, to: &parameters, shiftedBy: text.count)
            text.append(contentsOf: other.sqliteText.utf8)
        }

        var written: LedgerSQL {
            LedgerSQL(sqliteText: String(decoding: text, as: UTF8.self), parameters: parameters)
        }
    }

    struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var statement: Writing

        init(literalCapacity: Int, interpolationCount: Int) {
            statement = Writing(text: literalCapacity + interpolationCount * 4, values: interpolationCount)
        }

        mutating func appendLiteral(_ literal: StaticString) {
            statement.append(literal)
        }

        /// Text of the ledger's own (a column list, a clause): never a caller's value.
        mutating func appendInterpolation(unsafeRaw text: String) {
            statement.append(text)
        }

        /// Another statement, its values with it.
        mutating func appendInterpolation(_ other: consuming LedgerSQL) {
            statement.append(other)
        }

        mutating func appendInterpolation(bind value: String) {
            statement.append(.text(value))
        }

        mutating func appendInterpolation(bind value: String?) {
            statement.append(.optionalText(value))
        }

        mutating func appendInterpolation(bind value: Int) {
            statement.append(.int(value))
        }

        mutating func appendInterpolation(bind value: Int?) {
            statement.append(.optionalInt(value))
        }

        mutating func appendInterpolation(bind value: Int64) {
            statement.append(.int64(value))
        }

        mutating func appendInterpolation(bind value: Int64?) {
            statement.append(.optionalInt64(value))
        }

        mutating func appendInterpolation(bind value: Bool) {
            statement.append(.bool(value))
        }

        mutating func appendInterpolation(bind value: Bool?) {
            statement.append(.optionalBool(value))
        }

        mutating func appendInterpolation(bind value: Data) {
            statement.append(.data(value))
        }

        mutating func appendInterpolation(bind value: Data?) {
            statement.append(.optionalData(value))
        }

        /// Any other value, encoded as SQLiteKit encodes it when the statement runs.
        mutating func appendInterpolation(bind value: some Encodable & Sendable) {
            statement.append(.encodable(EncodableValue(value)))
        }

        /// Values separated by commas (an `IN (…)` list).
        mutating func appendInterpolation(binds values: [any Encodable & Sendable]) {
            for (index, value) in values.enumerated() {
                if index > 0 { statement.append(", ") }
                statement.append(.encodable(EncodableValue(value)))
            }
        }

        mutating func appendInterpolation(binds values: [String]) {
            for (index, value) in values.enumerated() {
                if index > 0 { statement.append(", ") }
                appendInterpolation(bind: value)
            }
        }

        mutating func appendInterpolation(literal value: String) {
            statement.append(LedgerSQL.quoted(value, by: "'"))
        }

        mutating func appendInterpolation(literal value: some BinaryInteger) {
            statement.append(String(value))
        }

        /// A value of one of the ledger's own types as a string literal: its raw value. What a text column holds
        /// comes from a Swift type, and so do the constants the statements compare it with.
        mutating func appendInterpolation<Value: RawRepresentable>(literal value: Value)
        where Value.RawValue == String {
            appendInterpolation(literal: value.rawValue)
        }

        /// Several such values, each a literal, joined by `joiner` (`IN (…)` lists).
        mutating func appendInterpolation<Value: RawRepresentable>(literals values: [Value], joinedBy joiner: String)
        where Value.RawValue == String {
            statement.append(values.map { LedgerSQL.quoted($0.rawValue, by: "'") }.joined(separator: joiner))
        }

        /// A name in double quotes, each quote doubled, as both dialects quote identifiers.
        mutating func appendInterpolation(ident name: String) {
            statement.append(LedgerSQL.quoted(name, by: "\""))
        }
    }
}

/// A value bound to a statement's parameter, as both databases take it: read once, where the statement is written, so
/// that no execution casts it from an existential (on PostgreSQL, those casts were 0.85% of a replica's samples).
enum BoundValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case text(String)
    case bytes(Data)

    /// What kind of value it is, without the value (which may be a secret).
    var kind: String {
        switch self {
        case .null: "NULL"
        case .bool: "of type Bool"
        case .integer: "of an integer type"
        case .text: "of type String"
        case .bytes: "of bytes"
        }
    }
}

extension Collection<LedgerSQL> {
    /// The statements one after the other, `separator` between each two, after `head`.
    func joined(separator: String, after head: String = "") -> LedgerSQL {
        var result = LedgerSQL(head)
        result.reserve(for: self, separator: separator)
        for (index, statement) in enumerated() {
            if index > 0 { result.append(separator) }
            result.append(statement)
        }
        return result
    }
}

/// A ``LedgerSQL`` statement on a database, to run or to read rows from (`run()`, `all()`, `first()`; SQLKit's other
/// fetching too).
final class LedgerSQLBuilder: SQLQueryFetcher {
    let statement: LedgerSQL
    let database: any SQLDatabase
    var query: any SQLExpression { statement }

    init(_ statement: LedgerSQL, on database: any SQLDatabase) {
        self.statement = statement
        self.database = database
    }

    /// Runs the statement.
    func run() async throws {
        if try await sqliteRows() != nil { return }
        try await database.execute(sql: statement) { _ in }
    }

    /// The statement's rows.
    func all() async throws -> [any SQLRow] {
        if let rows = try await sqliteRows() { return rows }
        return try await executedRows()
    }

    /// The statement's first row, if any.
    func first() async throws -> (any SQLRow)? {
        if let rows = try await sqliteRows() { return rows.first }
        return try await executedRows().first
    }

    /// The rows as any other database answers them (SQLKit's `execute`).
    private func executedRows() async throws -> [any SQLRow] {
        let rows = Mutex<[any SQLRow]>([])
        try await database.execute(sql: statement) { row in rows.withLock { $0.append(row) } }
        return rows.withLock { $0 }
    }

    /// On the ledger's own SQLite connections, the rows as the connection read them; nil elsewhere. SQLKit's fetching
    /// casts the builder to a protocol at each `first()`, boxes a list of rows and a closure, and reaches the
    /// connection through two existentials and a cast of the statement back from one; this compares the database's
    /// type (``SQLDatabase/exactly(_:)``).
    private func sqliteRows() async throws -> [PreparedSQLiteRow]? {
        if let write = database.exactly(WriteConnection.self) { return try await write.sqliteRows(of: statement) }
        if let connection = database.exactly(PreparedSQLiteConnection.self) {
            return try connection.rows(of: statement)
        }
        return nil
    }
}

extension SQLDatabase {
    /// `statement` on this database.
    func sql(_ statement: LedgerSQL) -> LedgerSQLBuilder {
        LedgerSQLBuilder(statement, on: self)
    }
}
