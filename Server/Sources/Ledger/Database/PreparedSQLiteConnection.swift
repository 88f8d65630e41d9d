import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import Synchronization
import VaporCSQLite

/// A connection to the ledger's SQLite file whose statements are prepared once and reused, and run on the calling
/// thread: the writer's own, or a reader's (sqlite-nio parses every statement again — a fifth of the writer's time
/// in the profile — and hands each one to a thread pool and back).
///
/// It speaks to the SQLite that sqlite-nio compiles in, so the process holds one copy of SQLite: two copies opening
/// the same file would each drop the other's POSIX locks on close.
final class PreparedSQLiteConnection: SQLDatabase {
    let logger: Logger
    let eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()
    var dialect: any SQLDialect { SQLiteDialect() }
    var queryLogLevel: Logger.Level? { .trace }
    private let connection: Mutex<PreparedStatements>
    /// Told the log's length after each of this connection's commits; kept alive as long as the connection, whose
    /// WAL hook points at it.
    private let checkpointer: SQLiteCheckpointer?
    private static let encoder = SQLiteDataEncoder()

    /// Opens (creating) the file at `path` with foreign keys on and a 10-second busy timeout. The writer opens it
    /// first, in write-ahead-log mode with `synchronous=FULL`: every commit is one sync of the log, durable across
    /// power loss, and readers see the last commit without waiting for the writer. The writer's log writes are
    /// gathered until that sync (``GatheringLogVFS``), which `synchronous=FULL` is what makes safe. The writer keeps its statement
    /// journal in memory (`temp_store=MEMORY`): a group's grew past SQLite's 64 KiB and was written to a temporary
    /// file, 6% of the writer's time in the load profile; it is only ever needed to undo a statement, never after a
    /// crash.
    /// - Parameter checkpointer: told the log's length after each commit, in place of SQLite's automatic checkpoint:
    ///   it runs most checkpoints beside the writer, and says when the writer must run one itself.
    init(path: String, writer: Bool, checkpointer: SQLiteCheckpointer? = nil, logger: Logger) throws {
        self.logger = logger
        self.checkpointer = checkpointer
        connection = Mutex(try PreparedStatements(path: path, vfs: writer ? GatheringLogVFS.name : nil))
        let modes = writer ? ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA temp_store=MEMORY"] : []
        for pragma in ["PRAGMA foreign_keys=ON", "PRAGMA busy_timeout=10000"] + modes {
            try run(pragma, binds: [])
        }
        if let checkpointer {
            connection.withLock { $0.reportCommits(to: checkpointer) }
        }
    }

    /// Copies what it can of the write-ahead log into the database file without waiting for the writer or a
    /// reader (a passive checkpoint); returns the log's length and how much of it has been copied, in pages.
    func checkpoint() throws -> (log: Int, copied: Int) {
        try connection.withLock { connection in
            // A connection opens the log only as it first reads; until then a checkpoint on it copies nothing.
            _ = try connection.run("PRAGMA journal_mode", binds: [])
            return try connection.checkpoint()
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try execute(query).forEach(onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<
        Void
    > {
        do {
            try execute(query).forEach(onRow)
            return eventLoop.makeSucceededVoidFuture()
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
    }

    /// Runs `insert` on the calling thread and answers the row id of the one row it inserted, nil when it inserted
    /// none (from `sqlite3_changes` and `sqlite3_last_insert_rowid`).
    func insertedRowID(_ insert: LedgerSQL) throws -> Int64? {
        logger.trace("Executing query", metadata: ["sql": .string(insert.sqliteText)])
        return try connection.withLock { connection in
            _ = try connection.run(insert.sqliteText, values: insert.valueCount, value: insert.sqliteValue(at:))
            return try connection.insertedRowID(sql: insert.sqliteText)
        }
    }

    deinit { close() }

    /// The name of the VFS the connection opened its files through (the writer's: ``GatheringLogVFS``).
    var vfsName: String? { connection.withLock { $0.vfsName } }

    /// Finalizes the statements and closes the file; statements run after it fail.
    func close() {
        connection.withLock { $0.close() }
    }

    /// Runs `statement` on the calling thread; its rows.
    func rows(of statement: LedgerSQL) throws -> [PreparedSQLiteRow] {
        logger.trace("Executing query", metadata: ["sql": .string(statement.sqliteText)])
        return try connection.withLock { connection in
            try connection.run(statement.sqliteText, values: statement.valueCount, value: statement.sqliteValue(at:))
        }
    }

    private func execute(_ query: any SQLExpression) throws -> [PreparedSQLiteRow] {
        if let statement = query as? LedgerSQL { return try rows(of: statement) }
        let (sql, binds) = serialize(query)
        logger.trace("Executing query", metadata: ["sql": .string(sql)])
        return try run(sql, binds: binds.map(Self.sqliteData))
    }

    /// A bound value as SQLite takes it: the types the ledger binds most directly (a cast; SQLiteKit's encoder
    /// looks for a protocol conformance and, for an optional, makes an encoder), anything else as SQLiteKit encodes it.
    static func sqliteData(_ value: any Encodable & Sendable) throws -> SQLiteData {
        switch value {
        case let text as String: .text(text)
        case let integer as Int64: .integer(Int(truncatingIfNeeded: integer))
        case let integer as Int: .integer(integer)
        default: try encoder.encode(value)
        }
    }

    @discardableResult
    private func run(_ sql: String, binds: [SQLiteData]) throws -> [PreparedSQLiteRow] {
        try connection.withLock { try $0.run(sql, binds: binds) }
    }
}

/// A raw SQLite handle and the statements prepared on it, by their text.
private struct PreparedStatements: ~Copyable {
    private var handle: OpaquePointer?
    private var statements: [StatementText: Prepared] = [:]

    /// A statement, and the column names of its rows once it has returned one.
    private final class Prepared {
        let statement: OpaquePointer
        var columns: PreparedSQLiteRow.Columns?

        init(_ statement: OpaquePointer) {
            self.statement = statement
        }

        /// The column names of the statement's rows: those kept, unless it names others now (SQLite prepares a
        /// statement again after the schema changed).
        func columns(of statement: OpaquePointer) -> PreparedSQLiteRow.Columns {
            if let columns, columns.areNames(of: statement) { return columns }
            let named = PreparedSQLiteRow.Columns(of: statement)
            columns = named
            return named
        }
    }
    /// The most statements kept; past it they are all finalized and the cache starts again (the ledger has a few
    /// dozen distinct statements; multi-row inserts add one per row count).
    private static let capacity = 512

    /// Opens the file at `path` through the VFS named `vfs` (nil: SQLite's default).
    init(path: String, vfs: String? = nil) throws {
        sqlite_nio_sqlite3_initialize()
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_EXRESCODE
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, vfs)
        guard status == SQLITE_OK, let handle else {
            let error = SQLiteStatementError(status: status, handle: handle, sql: "open \(path)")
            sqlite_nio_sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
    }

    mutating func close() {
        statements.values.forEach { sqlite_nio_sqlite3_finalize($0.statement) }
        statements.removeAll()
        sqlite_nio_sqlite3_close_v2(handle)
        handle = nil
    }

    /// After each commit, tells `checkpointer` the pages in the log, and checkpoints when it says the log is at its
    /// limit. This replaces SQLite's automatic checkpoint.
    func reportCommits(to checkpointer: SQLiteCheckpointer) {
        sqlite_nio_sqlite3_wal_hook(
            handle,
            { context, handle, _, pages in
                guard let context,
                    Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue().logGrew(to: Int(pages))
                else { return SQLITE_OK }
                // As SQLite's automatic checkpoint does: a failure here leaves the commit committed and is tried again
                // at the next commit.
                _ = sqlite_nio_sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
                return SQLITE_OK
            }, Unmanaged.passUnretained(checkpointer).toOpaque())
    }

    /// The row id of the row the last statement inserted, nil when it changed none; an error when it changed more
    /// (`sql`, its text, is named in it).
    func insertedRowID(sql: String) throws -> Int64? {
        guard let handle else { throw LedgerError.closed }
        switch sqlite_nio_sqlite3_changes64(handle) {
        case 0: return nil
        case 1: return sqlite_nio_sqlite3_last_insert_rowid(handle)
        case let changes: throw SQLiteStatementError.insertedRows(changes, sql: sql)
        }
    }

    /// The name of the VFS the connection opened its files through.
    var vfsName: String? {
        guard let handle else { return nil }
        var vfs: UnsafeMutablePointer<sqlite3_vfs>?
        guard sqlite_nio_sqlite3_file_control(handle, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) == SQLITE_OK else {
            return nil
        }
        return vfs?.pointee.zName.map { String(cString: $0) }
    }

    func checkpoint() throws -> (log: Int, copied: Int) {
        guard let handle else { throw LedgerError.closed }
        var log: Int32 = 0
        var copied: Int32 = 0
        let status = sqlite_nio_sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        guard status == SQLITE_OK else { throw SQLiteStatementError(status: status, handle: handle, sql: "checkpoint") }
        guard log >= 0 else { throw SQLiteStatementError.notInWriteAheadLogMode }
        return (Int(log), Int(copied))
    }

    mutating func run(_ sql: String, binds: [SQLiteData]) throws -> [PreparedSQLiteRow] {
        try run(sql, values: binds.count) { .encoded(binds[$0]) }
    }

    /// Runs `sql` with `values` values, the one at each index (from 0) as `value` gives it; its rows.
    mutating func run(_ sql: String, values count: Int, value bound: (Int) throws -> SQLiteValue) throws
        -> [PreparedSQLiteRow]
    {
        guard let handle else { throw LedgerError.closed }
        let prepared = try prepared(sql, on: handle)
        let statement = prepared.statement
        // Reset after each use, bindings kept: every use binds every parameter again (checked below), and clearing
        // them would make SQLite parse again any statement whose plan looked at a bound value (three hot ones did,
        // on every execution).
        defer { sqlite_nio_sqlite3_reset(statement) }
        let parameters = Int(sqlite_nio_sqlite3_bind_parameter_count(statement))
        guard parameters == count else {
            throw SQLiteStatementError.bindCount(count, parameters: parameters, sql: sql)
        }
        for index in 0..<count {
            let status = bind(try bound(index), at: Int32(truncatingIfNeeded: index + 1), of: statement)
            guard status == SQLITE_OK else { throw SQLiteStatementError(status: status, handle: handle, sql: sql) }
        }
        var rows: [PreparedSQLiteRow] = []
        var columns: PreparedSQLiteRow.Columns?
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw SQLiteStatementError(status: status, handle: handle, sql: sql) }
            let names = columns ?? prepared.columns(of: statement)
            columns = names
            rows.append(
                PreparedSQLiteRow(
                    columns: names, values: try (0..<names.count).map { try value(at: $0, of: statement) }))
        }
    }

    private mutating func prepared(_ sql: String, on handle: OpaquePointer) throws -> Prepared {
        if let prepared = statements[StatementText(sql)] { return prepared }
        if statements.count >= Self.capacity {
            statements.values.forEach { sqlite_nio_sqlite3_finalize($0.statement) }
            statements.removeAll(keepingCapacity: true)
        }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else {
            throw SQLiteStatementError(status: status, handle: handle, sql: sql)
        }
        let prepared = Prepared(statement)
        statements[StatementText(sql)] = prepared
        return prepared
    }

    private func bind(_ value: SQLiteValue, at index: Int32, of statement: OpaquePointer) -> Int32 {
        switch value {
        case .encoded(let data): bind(data, at: index, of: statement)
        case .bound(.null): sqlite_nio_sqlite3_bind_null(statement, index)
        case .bound(.bool(let flag)): sqlite_nio_sqlite3_bind_int64(statement, index, flag ? 1 : 0)
        case .bound(.integer(let integer)): sqlite_nio_sqlite3_bind_int64(statement, index, integer)
        case .bound(.text(let text)): bind(.text(text), at: index, of: statement)
        case .bound(.bytes(let bytes)):
            // The bytes as they are: `SQLiteData` would have copied them into a `ByteBuffer` first.
            bytes.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite_nio_sqlite3_bind_zeroblob(statement, index, 0)
                }
                return sqlite_nio_sqlite3_bind_blob64(statement, index, base, UInt64(bytes.count), transient)
            }
        }
    }

    private func bind(_ value: SQLiteData, at index: Int32, of statement: OpaquePointer) -> Int32 {
        switch value {
        case .integer(let integer):
            return sqlite_nio_sqlite3_bind_int64(statement, index, Int64(integer))
        case .float(let float):
            return sqlite_nio_sqlite3_bind_double(statement, index, float)
        case .null:
            return sqlite_nio_sqlite3_bind_null(statement, index)
        case .text(var text):
            return text.withUTF8 { bytes in
                // An empty buffer may have no address, which SQLite would take for NULL.
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite_nio_sqlite3_bind_text64(statement, index, "", 0, transient, UInt8(SQLITE_UTF8))
                }
                return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite_nio_sqlite3_bind_text64(
                        statement, index, $0, UInt64(bytes.count), transient, UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let blob):
            return blob.withUnsafeReadableBytes { bytes in
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite_nio_sqlite3_bind_zeroblob(statement, index, 0)
                }
                return sqlite_nio_sqlite3_bind_blob64(statement, index, base, UInt64(bytes.count), transient)
            }
        }
    }

    private func value(at column: Int32, of statement: OpaquePointer) throws -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return .integer(Int(truncatingIfNeeded: sqlite_nio_sqlite3_column_int64(statement, column)))
        case SQLITE_FLOAT:
            return .float(sqlite_nio_sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(statement, column) else {
                throw SQLiteStatementError(status: SQLITE_NOMEM, handle: handle, sql: "reading a text column")
            }
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            if let bytes = sqlite_nio_sqlite3_column_blob(statement, column) {
                buffer.writeBytes(UnsafeRawBufferPointer(start: bytes, count: count))
            }
            return .blob(buffer)
        default:
            return .null
        }
    }
}

/// A statement's text as the key its prepared statement is kept under: equal when the texts are, hashed by its length
/// and its first and last 16 bytes. The whole text hashed (a few hundred bytes through SipHash) at each of a
/// submission's statements was 12,700 instructions of its 1.89 million (`scripts/bench/instructions`); two statements
/// of one length, head and tail share a bucket and are told apart by their text.
private struct StatementText: Hashable {
    let text: String

    init(_ text: String) {
        self.text = text
    }

    /// The bytes hashed at each end.
    private static let ends = 16

    /// Equal texts hash alike whatever their storage: `withUTF8` makes a copy contiguous first when it is not (the
    /// ledger's own texts always are).
    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.prefix(Self.ends))))
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.suffix(Self.ends))))
        }
    }
}

/// A value as SQLite binds it: one the ledger read where its statement was written (``LedgerSQL``), or one
/// SQLiteKit's encoder made.
enum SQLiteValue: Equatable {
    case bound(BoundValue)
    case encoded(SQLiteData)
}

/// SQLite copies a bound value at once (`SQLITE_TRANSIENT`).
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A row read through a ``PreparedSQLiteConnection``.
struct PreparedSQLiteRow: SQLRow {
    /// The column names of a statement's rows, shared by its rows.
    final class Columns: Sendable {
        let names: [String]
        let offsets: [String: Int]
        var count: Int32 { Int32(truncatingIfNeeded: names.count) }

        init(of statement: OpaquePointer) {
            let count = sqlite_nio_sqlite3_column_count(statement)
            names = (0..<count).map { sqlite_nio_sqlite3_column_name(statement, $0).map { String(cString: $0) } ?? "" }
            offsets = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        }

        /// Whether these are `statement`'s column names, in order.
        func areNames(of statement: OpaquePointer) -> Bool {
            guard sqlite_nio_sqlite3_column_count(statement) == count else { return false }
            return names.indices.allSatisfy { index in
                guard let name = sqlite_nio_sqlite3_column_name(statement, Int32(truncatingIfNeeded: index)) else {
                    return false
                }
                return names[index].withCString { strcmp($0, name) == 0 }
            }
        }
    }

    let columns: Columns
    let values: [SQLiteData]
    private static let decoder = SQLiteDataDecoder()

    var allColumns: [String] { columns.names }

    func contains(column: String) -> Bool { columns.offsets[column] != nil }

    func decodeNil(column: String) throws -> Bool {
        columns.offsets[column].map { values[$0] == .null } ?? true
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let offset = columns.offsets[column] else { throw SQLiteStatementError.missingColumn(column) }
        if let value = Self.plain(values[offset], as: D.self) { return value }
        return try Self.decoder.decode(D.self, from: values[offset])
    }

    /// The ledger's usual columns read as SQLiteKit's decoder reads them, without its cast of `D` to
    /// `SQLiteDataConvertible` (a lookup in the runtime's conformance tables at every column) and, for an optional,
    /// its nested decoder: text as `String`, an integer as `Int64` or `Int`, either or NULL as an optional of them
    /// (0.85% of a fresh submission's samples went to decoding its rows). Nil for any other pairing, which the decoder
    /// answers (or refuses) as before.
    static func plain<D>(_ data: SQLiteData, as type: D.Type) -> D? {
        switch data {
        case .text(let text):
            if D.self == String.self { return unsafeBitCast(text, to: D.self) }
            if D.self == String?.self { return unsafeBitCast(String?.some(text), to: D.self) }
        case .integer(let integer):
            if D.self == Int64.self { return unsafeBitCast(Int64(integer), to: D.self) }
            if D.self == Int64?.self { return unsafeBitCast(Int64?.some(Int64(integer)), to: D.self) }
            if D.self == Int.self { return unsafeBitCast(Int(integer), to: D.self) }
            if D.self == Int?.self { return unsafeBitCast(Int?.some(Int(integer)), to: D.self) }
        case .null:
            if D.self == String?.self { return unsafeBitCast(String?.none, to: D.self) }
            if D.self == Int64?.self { return unsafeBitCast(Int64?.none, to: D.self) }
            if D.self == Int?.self { return unsafeBitCast(Int?.none, to: D.self) }
        case .float, .blob:
            break
        }
        return nil
    }
}

/// A statement SQLite refused or failed, with its message.
struct SQLiteStatementError: Error, CustomStringConvertible {
    let description: String

    init(status: Int32, handle: OpaquePointer?, sql: String) {
        let message =
            handle.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? sqlite_nio_sqlite3_errstr(status).map { String(cString: $0) } ?? "error"
        description = "SQLite error \(status): \(message) (\(sql.prefix(200)))"
    }

    private init(description: String) {
        self.description = description
    }

    static func missingColumn(_ column: String) -> Self {
        Self(description: "no column \(column) in the row")
    }

    static let notInWriteAheadLogMode = Self(
        description: "the database is not in write-ahead-log mode: nothing to checkpoint")

    static func insertedRows(_ count: Int64, sql: String) -> Self {
        Self(description: "an insert of one row changed \(count) rows: \(sql.prefix(200))")
    }

    static func bindCount(_ count: Int, parameters: Int, sql: String) -> Self {
        Self(description: "\(count) values for the \(parameters) parameters of \(sql.prefix(200))")
    }
}
