import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

extension SQLLedger {
    /// Stores a new session under the SHA-256 of its token, and logs the sign-in.
    public func openSession(tokenSHA256: String, _ session: ConsoleSessionRecord) async throws {
        try await database.transaction(joining: write) { db in
            try await db.sql(
                """
                INSERT INTO console_sessions (token_sha256, operator, csrf, created_at, last_seen_at)
                VALUES (\(bind: tokenSHA256), \(bind: session.operatorName), \(bind: session.csrfToken),
                        \(bind: session.createdAt.millisecondsSince1970), \(bind: session.lastSeenAt.millisecondsSince1970))
                """
            ).run()
            try await Self.logAction(
                OperatorAction(operatorName: session.operatorName, action: .signIn, at: session.createdAt), db)
        }
    }

    /// The session stored under the token's SHA-256, if any.
    public func session(tokenSHA256: String) async throws -> ConsoleSessionRecord? {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT operator, csrf, created_at, last_seen_at FROM console_sessions WHERE token_sha256 = \(bind: tokenSHA256)
                """
            ).first().map { row in
                ConsoleSessionRecord(
                    operatorName: try row.decode(column: "operator", as: String.self),
                    csrfToken: try row.decode(column: "csrf", as: String.self),
                    createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
                    lastSeenAt: Date(millisecondsSince1970: try row.decode(column: "last_seen_at", as: Int64.self)))
            }
        }
    }

    /// Moves a session's last use to `date`.
    public func touchSession(tokenSHA256: String, at date: Date) async throws {
        try await database.transaction(joining: write) { db in
            try await db.sql(
                """
                UPDATE console_sessions SET last_seen_at = \(bind: date.millisecondsSince1970) WHERE token_sha256 = \(bind: tokenSHA256)
                """
            ).run()
        }
    }

    /// Ends a session (sign-out, or idle expiry when `action` is nil: nothing is logged then); and deletes every
    /// session idle since before `idleBefore`.
    public func closeSession(tokenSHA256: String, action: OperatorAction?, idleBefore: Date) async throws {
        try await database.transaction(joining: write) { db in
            try await db.sql("DELETE FROM console_sessions WHERE token_sha256 = \(bind: tokenSHA256)").run()
            try await db.sql(
                "DELETE FROM console_sessions WHERE last_seen_at < \(bind: idleBefore.millisecondsSince1970)"
            ).run()
            if let action { try await Self.logAction(action, db) }
        }
    }

    /// Appends to the operators' log (failed sign-ins included, under the operator name they claimed or `?`).
    public func logOperatorAction(_ action: OperatorAction) async throws {
        try await database.transaction(joining: write) { db in try await Self.logAction(action, db) }
    }

    /// The operators' log, newest first.
    public func operatorActions(limit: Int) async throws -> [OperatorAction] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT operator, action, target, detail, created_at FROM operator_actions ORDER BY id DESC LIMIT \(bind: min(max(limit, 1), 500))
                """
            ).all().map { row in
                OperatorAction(
                    operatorName: try row.decode(column: "operator", as: String.self),
                    action: OperatorActionKind(rawValue: try row.decode(column: "action", as: String.self)),
                    target: try row.decode(column: "target", as: String?.self),
                    detail: try row.decode(column: "detail", as: String?.self),
                    at: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)))
            }
        }
    }

    static func logAction(_ action: OperatorAction, _ db: any SQLDatabase) async throws {
        try await db.sql(
            """
            INSERT INTO operator_actions (operator, action, target, detail, created_at)
            VALUES (\(bind: String(action.operatorName.prefix(64))), \(bind: action.action.rawValue), \(bind: action.target.map { String($0.prefix(200)) }),
                    \(bind: action.detail.map { String($0.prefix(1000)) }), \(bind: action.at.millisecondsSince1970))
            """
        ).run()
    }
}
