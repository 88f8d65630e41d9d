import Foundation
import JWTKit

/// Mints HS256 user tokens, as a merchant's backend would; used by `ordersafe token` in the sandbox and by tests.
public struct DevelopmentTokenIssuer: Sendable {
    private let keys: JWTKeyCollection

    public init(secret: String) async {
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
    }

    /// A token for `userID` valid for `lifetime` from `now`.
    public func token(userID: String, now: Date, lifetime: TimeInterval = 24 * 3600) async throws -> String {
        try await keys.sign(
            UserClaims(
                sub: SubjectClaim(value: userID), exp: ExpirationClaim(value: now.addingTimeInterval(lifetime)),
                iat: IssuedAtClaim(value: now)))
    }
}
