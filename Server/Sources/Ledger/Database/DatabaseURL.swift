import Foundation

/// Where the ledger lives: an SQLite file (the embedded default) or a PostgreSQL server.
public enum DatabaseURL: Sendable, Hashable, CustomStringConvertible {
    /// An SQLite database file; created when missing.
    case sqliteFile(path: String)
    /// A private in-memory SQLite database (tests).
    case sqliteMemory
    /// A PostgreSQL connection string (`postgres://user:password@host:port/database?sslmode=…`).
    case postgres(url: String)

    /// Parses `sqlite:PATH`, `sqlite://PATH`, `sqlite::memory:`, `postgres://…` or `postgresql://…`.
    public init(parsing text: String) throws(DatabaseURLError) {
        if text == "sqlite::memory:" {
            self = .sqliteMemory
        } else if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else { throw DatabaseURLError(text: text, reason: "the SQLite file path is empty") }
            self = .sqliteFile(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            guard let components = URLComponents(string: text), components.host?.isEmpty == false else {
                throw DatabaseURLError(text: text, reason: "expected postgres://user:password@host:port/database")
            }
            self = .postgres(url: text)
        } else {
            throw DatabaseURLError(
                text: text, reason: "expected sqlite:PATH or postgres://user:password@host:port/database")
        }
    }

    /// The URL with any password masked, safe to log.
    public var description: String {
        switch self {
        case .sqliteFile(let path): return "sqlite:\(path)"
        case .sqliteMemory: return "sqlite::memory:"
        case .postgres(let url):
            guard var components = URLComponents(string: url) else { return "postgres://…" }
            if components.password != nil { components.password = "***" }
            return components.string ?? "postgres://…"
        }
    }
}

/// A database URL that could not be understood.
public struct DatabaseURLError: Error, CustomStringConvertible {
    public var text: String
    public var reason: String
    public var description: String { "invalid database URL: \(reason)" }
}
