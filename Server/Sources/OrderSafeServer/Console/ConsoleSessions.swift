import Crypto
import Foundation
import Hummingbird
import Ledger
import OrderSafeModel

/// A signed-in operator, as a request sees it.
struct OperatorSession: Sendable {
    var operatorName: String
    var csrfToken: String
    var tokenSHA256: String
}

/// Console sessions: a random token in an `HttpOnly`, `SameSite=Strict` cookie (`Secure` unless configured off for
/// plain-HTTP development), stored in the ledger only as its SHA-256 so every replica knows it and a database
/// reader cannot use it; a CSRF token per session for every form; idle expiry and an absolute lifetime; sign-out
/// deletes it everywhere.
struct ConsoleSessions: Sendable {
    let ledger: any ConsoleSessionStore
    let clock: any WallClock
    let idle: TimeInterval
    /// How long a session may last however busy it is.
    let lifetime: TimeInterval
    let secureCookie: Bool

    static let cookieName = "ordersafe_console"
    /// The sign-in form's CSRF token before there is a session (double submit: cookie and field must match).
    static let signInCookieName = "ordersafe_sign_in"
    /// How stale `last_seen_at` may get before a request writes it again: at most a minute (one write a minute, not
    /// one per page), and a tenth of the idle limit, so a short limit is kept to within a tenth of itself.
    var touchInterval: TimeInterval { min(60, idle / 10) }

    /// Opens a session for `operatorName`; returns the token for the cookie.
    func open(operatorName: String) async throws -> String {
        let token = Self.randomToken()
        let now = clock.now()
        try await ledger.openSession(
            tokenSHA256: Self.digest(token),
            ConsoleSessionRecord(
                operatorName: operatorName, csrfToken: Self.randomToken(), createdAt: now, lastSeenAt: now))
        return token
    }

    /// The session the request's cookie names, unless it is unknown, idle too long or past its lifetime (then it is
    /// deleted).
    func current(_ request: Request) async throws -> OperatorSession? {
        guard let token = request.cookies[Self.cookieName]?.value, Self.isWellFormed(token) else { return nil }
        let digest = Self.digest(token)
        guard let record = try await ledger.session(tokenSHA256: digest) else { return nil }
        let now = clock.now()
        if now.timeIntervalSince(record.lastSeenAt) > idle || now.timeIntervalSince(record.createdAt) > lifetime {
            try await ledger.closeSession(tokenSHA256: digest, action: nil, idleBefore: now.addingTimeInterval(-idle))
            return nil
        }
        if now.timeIntervalSince(record.lastSeenAt) >= touchInterval {
            try await ledger.touchSession(tokenSHA256: digest, at: now)
        }
        return OperatorSession(operatorName: record.operatorName, csrfToken: record.csrfToken, tokenSHA256: digest)
    }

    /// Ends the session everywhere and logs the sign-out.
    func close(_ session: OperatorSession) async throws {
        let now = clock.now()
        try await ledger.closeSession(
            tokenSHA256: session.tokenSHA256,
            action: OperatorAction(operatorName: session.operatorName, action: .signOut, at: now),
            idleBefore: now.addingTimeInterval(-idle))
    }

    func cookie(_ token: String) -> Cookie {
        Cookie(
            name: Self.cookieName, value: token, path: "/admin", secure: secureCookie, httpOnly: true, sameSite: .strict
        )
    }

    func signInCookie(_ token: String) -> Cookie {
        Cookie(
            name: Self.signInCookieName, value: token, maxAge: 3600, path: "/admin", secure: secureCookie,
            httpOnly: true, sameSite: .strict)
    }

    /// A cookie that deletes `name` in the browser.
    func expired(_ name: String) -> Cookie {
        Cookie(
            name: name, value: "", maxAge: 0, path: "/admin", secure: secureCookie, httpOnly: true, sameSite: .strict)
    }

    /// 32 bytes from the system's secure generator, base64url without padding (43 characters). Never the
    /// injected test randomness: a session token must not be guessable.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }

    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43
            && token.utf8.allSatisfy { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0.isASCIILetterOrDigit }
    }

    static func digest(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Compares two tokens in time that does not depend on where they differ.
    static func same(_ a: String, _ b: String) -> Bool { same(Array(a.utf8), Array(b.utf8)) }

    /// Compares two non-empty byte strings in time that does not depend on where they differ.
    static func same(_ x: [UInt8], _ y: [UInt8]) -> Bool {
        guard x.count == y.count, !x.isEmpty else { return false }
        var difference: UInt8 = 0
        for (p, q) in zip(x, y) { difference |= p ^ q }
        return difference == 0
    }
}
