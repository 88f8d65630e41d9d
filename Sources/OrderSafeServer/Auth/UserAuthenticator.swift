import Crypto
import Foundation
import JWTKit
import OrderSafeModel

/// The user a request acts for, proven by a bearer JWT from the merchant's backend.
public struct AuthenticatedUser: Sendable, Hashable {
    public var id: String
}

/// Verifies app-facing bearer tokens: HS256 (shared secret) or ES256 (public key), `exp` against an injected clock.
public struct UserAuthenticator: Sendable {
    private let keys: JWTKeyCollection
    private let issuer: String?
    private let audience: String?
    private let clock: any WallClock

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
        issuer = auth.jwtIssuer
        audience = auth.jwtAudience
        self.clock = clock
    }

    /// The user named by a valid token in an `Authorization` header value.
    func authenticate(authorization: String?) async throws(AuthError) -> AuthenticatedUser {
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            throw .missingToken
        }
        let token = authorization.dropFirst(7).trimmingCharacters(in: .whitespaces)
        guard token.utf8.count <= 8192, token.split(separator: ".", omittingEmptySubsequences: false).count == 3 else {
            throw .malformedToken
        }
        let claims: UserClaims
        do {
            claims = try await keys.verify(token, as: UserClaims.self)
        } catch let error as JWTError where error.errorType == .malformedToken {
            throw .malformedToken
        } catch {
            throw .invalidSignature
        }
        guard claims.exp.value > clock.now() else { throw .expired }
        if let issuer, claims.iss?.value != issuer { throw .wrongIssuer }
        if let audience, claims.aud?.value.contains(audience) != true { throw .wrongAudience }
        let subject = claims.sub.value
        guard !subject.isEmpty, subject.count <= 128, subject.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else { throw .invalidSubject }
        return AuthenticatedUser(id: subject)
    }
}

/// Checks the admin key in constant time.
public struct AdminAuthenticator: Sendable {
    private let keyDigest: SHA256.Digest

    public init(adminKey: String) {
        keyDigest = SHA256.hash(data: Data(adminKey.utf8))
    }

    func authenticate(authorization: String?) throws(AuthError) {
        guard let authorization, authorization.prefix(7).lowercased() == "bearer " else { throw .invalidAdminKey }
        // Comparing digests keeps the comparison's time independent of where the keys differ.
        let offered = SHA256.hash(data: Data(authorization.dropFirst(7).utf8))
        guard offered == keyDigest else { throw .invalidAdminKey }
    }
}
