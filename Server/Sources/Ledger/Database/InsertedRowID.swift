import SQLKit

extension SQLDatabase {
    /// Runs `insert` — one row into a table whose `id` is its row id, that may do nothing on a conflict — and answers
    /// the id of the row it inserted, nil when it inserted none: on the ledger's SQLite connections as the connection
    /// tells it (``PreparedSQLiteConnection/insertedRowID(_:)``), elsewhere through `RETURNING id`. SQLite runs a
    /// `RETURNING` clause as a trigger: the insert then keeps a statement journal (a copy of every page it changes,
    /// the order's ten indexes' included) and gathers its rows in a temporary table first: an order's insert took
    /// 53–57 µs with `RETURNING id`, 47–50 µs without (docs/benchmarks.md). The connections are told apart by their
    /// types (``SQLDatabase/exactly(_:)``); a cast to a protocol looked its conformances up at every insert.
    func insertedID(_ insert: LedgerSQL) async throws -> Int64? {
        if let write = exactly(WriteConnection.self) { return try await write.insertedRowID(insert) }
        if let connection = exactly(PreparedSQLiteConnection.self) { return try connection.insertedRowID(insert) }
        return try await sql(insert + " RETURNING id").first()?.decode(column: "id", as: Int64.self)
    }
}
