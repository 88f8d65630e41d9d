/// One forward-only step of the ledger schema. Applied steps are never edited; change the schema by appending one.
struct Migration: Sendable {
    let version: Int
    let name: String
    /// The statements, with `{ID}` (auto-increment primary key) and `{BLOB}` spelled per engine.
    let statements: [String]
    /// Statements that exist in one engine's spelling only (triggers).
    let engineStatements: [SQLEngine: [String]]

    init(version: Int, name: String, statements: [String], engineStatements: [SQLEngine: [String]] = [:]) {
        self.version = version
        self.name = name
        self.statements = statements
        self.engineStatements = engineStatements
    }

    func sql(for engine: SQLEngine) -> [String] {
        let id =
            engine == .sqlite ? "INTEGER PRIMARY KEY AUTOINCREMENT" : "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
        let blob = engine == .sqlite ? "BLOB" : "BYTEA"
        return statements.map {
            $0.replacingOccurrences(of: "{ID}", with: id).replacingOccurrences(of: "{BLOB}", with: blob)
        }
            + (engineStatements[engine] ?? [])
    }
}
