import ChannelSupport
import Crypto
import Foundation
import JWTKit
import OrderSafeModel

/// The user a request acts for, proven by a bearer JWT from the merchant's backend.
public struct AuthenticatedUser: Sendable, Hashable {
    public var id: String
}

/// Verifies app-facing bearer tokens: HS256 (shared secret) or ES256 (public key). The header must name the
/// configured algorithm and no `crit` extension; `exp`, `nbf` and `iat` are checked against an injected clock with a
/// minute of leeway, and a token may live at most `auth.max_token_lifetime_seconds`.
public struct UserAuthenticator: Sendable {
    /// Clock skew tolerated between the merchant's backend and this server.
    static let leeway: TimeInterval = 60

    private let keys: JWTKeyCollection
    private let algorithm: Settings.JWTAlgorithm
    private let issuer: String?
    private let audience: String?
    private let maxLifetime: TimeInterval
    private let clock: any WallClock
    /// The claims of tokens whose signature and header were verified: an app sends the same token with every request
    /// of a session, and JWTKit's verification (its JSON decoding above all) was 3% of the server's samples under
    /// load. Keyed by the whole token, signature included, so only the very bytes verified before are found (and only
    /// verified tokens are kept); the claims are still checked against the clock on every request.
    private let verified = RecentValues<String, UserClaims>(generation: 4_096)

    public init(auth: Settings.Auth, hs256Secret: String?, clock: any WallClock) async throws {
        keys = JWTKeyCollection()
        switch auth.jwtAlgorithm {
        case .hs256:
            guard let secret = hs256Secret else {
                throw SettingsError(key: "auth.jwt_secret", reason: "is required with HS256")
            }
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        case .es256:
            do {
                await keys.add(ecdsa: try ES256PublicKey(pem: auth.jwtPublicKeyPEM ?? ""))
            } catch {
                throw SettingsError(key: "auth.jwt_public_key", reason: "is not a PEM P-256 public key")
            }
        }
        algorithm = auth.jwtAlgorithm
        issuer = auth.jwtIssuer
        audience = auth.jwtAudience
        maxLifetime = TimeInterval(auth.maxTokenLifetimeSeconds)
        self.clock = clock
    }

    /// The user named by a valid token in an `Authorization` header value.
    func authenticate(authorization: String?) async throws(AuthError) -> AuthenticatedUser {
        guard let authorization, let token = Self.bearerToken(authorization) else { throw .missingToken }
        guard token.utf8.count <= 8192 else { throw .malformedToken }
        let claims: UserClaims
        if let known = verified.value(for: token) {
            claims = known
        } else {
            let segments = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard segments.count == 3 else { throw .malformedToken }
            try checkHeader(Array(segments[0]))
            try checkClaims(Array(segments[1]))
            do {
                claims = try await keys.verify(token, as: UserClaims.self)
            } catch let error as JWTError where error.errorType == .malformedToken {
                throw .malformedToken
            } catch {
                throw .invalidSignature
            }
            verified.remember(token, claims)
        }
        let now = clock.now()
        guard claims.exp.value.addingTimeInterval(Self.leeway) > now else { throw .expired }
        if let notBefore = claims.nbf?.value, notBefore > now.addingTimeInterval(Self.leeway) { throw .notYetValid }
        if let issuedAt = claims.iat?.value, issuedAt > now.addingTimeInterval(Self.leeway) { throw .notYetValid }
        guard claims.exp.value.timeIntervalSince(claims.iat?.value ?? now) <= maxLifetime + Self.leeway else {
            throw .lifetimeTooLong
        }
        if let issuer, claims.iss?.value != issuer { throw .wrongIssuer }
        if let audience, claims.aud?.value.contains(audience) != true { throw .wrongAudience }
        let subject = claims.sub.value
        guard !subject.isEmpty, subject.count <= 128, subject.unicodeScalars.allSatisfy(Self.isVisible) else {
            throw .invalidSubject
        }
        return AuthenticatedUser(id: subject)
    }

    /// The token of an `Authorization` value, `Bearer` in any case, a space, and the token without the blanks around
    /// it; nil for any other value. A value whose token starts and ends with visible ASCII (what every JWT is) is read
    /// by its bytes: there no character can span the space or the token's ends, so it is what the character by
    /// character reading below gives, without counting the value's characters (Unicode's grapheme breaking over the
    /// whole token), lowercasing a copy or looking up the ends' properties (together 1.3% of a submission's samples).
    static func bearerToken(_ authorization: String) -> String? {
        let bytes = authorization.utf8
        let scheme = "bearer ".utf8
        if bytes.count > scheme.count,
            zip(bytes, scheme).allSatisfy({ $1 == 0x20 ? $0 == 0x20 : $0 | 0x20 == $1 }),
            let first = bytes.dropFirst(scheme.count).first, let last = bytes.last,
            (0x21...0x7E).contains(first), (0x21...0x7E).contains(last)
        {
            return String(Substring(authorization.utf8.dropFirst(scheme.count)))
        }
        guard authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else { return nil }
        return trimmed(authorization.dropFirst(7))
    }

    /// `text` without the tabs and spaces around it, as `CharacterSet.whitespaces` has them (tab, Unicode's space
    /// separators and the zero-width space), read scalar by scalar from each end: Foundation's
    /// `trimmingCharacters(in:)` bridged every token through `NSString`, 1.4% of the server's samples under load.
    static func trimmed(_ text: Substring) -> String {
        func isBlank(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
        }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isBlank($0) }),
            let last = scalars.lastIndex(where: { !isBlank($0) })
        else {
            return ""
        }
        return String(scalars[first...last])
    }

    /// The header names exactly the configured algorithm (a token may not pick another one the key could serve)
    /// and asks for no extension (`crit`), since this server understands none.
    private func checkHeader(_ segment: [UInt8]) throws(AuthError) {
        guard let bytes = Base64URL.decode(segment[...]), let header = try? JSONObject(bytes) else {
            throw .malformedToken
        }
        guard (try? header.optionalString("alg")) == algorithm.rawValue else { throw .wrongAlgorithm }
        guard !header.contains("crit") else { throw .unsupportedExtension }
    }

    /// The claims are one JSON object with each member once: `{"sub":"alice","sub":"mallory"}` names no one user
    /// (JWTKit's decoder keeps the first, another reader the last), so it is refused, as a duplicate header member is.
    private func checkClaims(_ segment: [UInt8]) throws(AuthError) {
        guard let bytes = Base64URL.decode(segment[...]), (try? JSONObject(bytes)) != nil else { throw .malformedToken }
    }

    /// Letters, marks, numbers, punctuation and symbols: no spaces, controls (C0 and C1), format characters (bidi
    /// overrides, zero-width joiners) or unassigned code points, which would make two ids look alike.
    static func isVisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .spaceSeparator, .lineSeparator,
            .paragraphSeparator:
            false
        default: true
        }
    }
}
