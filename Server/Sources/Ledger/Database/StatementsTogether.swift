import SQLKit

extension LedgerDatabase {
    /// Runs statements none of which reads what another writes, in order: on PostgreSQL as one statement, each but
    /// the last in a `WITH` (one round trip instead of one each); on SQLite one after the other, which costs no
    /// round trip.
    static func runTogether(_ statements: [LedgerSQL], on db: any SQLDatabase) async throws {
        guard let last = statements.last else { return }
        guard db.dialect.name == "postgresql", statements.count > 1 else {
            for statement in statements { try await db.sql(statement).run() }
            return
        }
        var query = LedgerSQL("")
        for (index, statement) in statements.dropLast().enumerated() {
            query += LedgerSQL((index == 0 ? "WITH " : ", ") + "together\(index) AS (") + statement + ")"
        }
        try await db.sql(query + " " + last).run()
    }
}
