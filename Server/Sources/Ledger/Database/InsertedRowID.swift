import SQLKit

/// A connection that tells the id of the row an insert made without being asked `RETURNING id`. SQLite runs a
/// `RETURNING` clause as a trigger: the insert then keeps a statement journal (a copy of every page it changes, the
/// order's ten indexes' included) and gathers its rows in a temporary table first: an order's insert took 53–57 µs
/// with `RETURNING id`, 47–50 µs without (docs/benchmarks.md). SQLite's connection answers from `sqlite3_changes` and `sqlite3_last_insert_rowid` instead.
protocol InsertedRowIDs: SQLDatabase {
    /// Runs `insert` and answers the row id of the one row it inserted, nil when it inserted none.
    func insertedRowID(_ insert: LedgerSQL) async throws -> Int64?
}

extension SQLDatabase {
    /// Runs `insert` — one row into a table whose `id` is its row id, that may do nothing on a conflict — and answers
    /// the id of the row it inserted, nil when it inserted none: on SQLite as the connection tells it, elsewhere
    /// through `RETURNING id`.
    func insertedID(_ insert: LedgerSQL) async throws -> Int64? {
        if let connection = self as? any InsertedRowIDs {
            return try await connection.insertedRowID(insert)
        }
        return try await sql(insert + " RETURNING id").first()?.decode(column: "id", as: Int64.self)
    }
}
