import SQLKit

/// One forward-only step of the ledger schema. Applied steps are never edited; change the schema by appending one.
struct Migration: Sendable {
    let version: Int
    let name: String
    /// The statements, with `{ID}` (auto-increment primary key) and `{BLOB}` spelled per engine.
    let statements: [String]
    /// Statements that exist in one engine's spelling only (triggers).
    let engineStatements: [SQLEngine: [String]]
    /// A step one engine takes that no fixed statement can say, run after the statements in the same transaction.
    let engineSteps: [SQLEngine: @Sendable (any SQLDatabase) async throws -> Void]

    init(
        version: Int, name: String, statements: [String], engineStatements: [SQLEngine: [String]] = [:],
        engineSteps: [SQLEngine: @Sendable (any SQLDatabase) async throws -> Void] = [:]
    ) {
        self.version = version
        self.name = name
        self.statements = statements
        self.engineStatements = engineStatements
        self.engineSteps = engineSteps
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
