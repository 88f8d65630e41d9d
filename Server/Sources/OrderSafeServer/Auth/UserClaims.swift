import JWTKit

/// The claims of the bearer token the merchant's backend issues for its user.
struct UserClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var iss: IssuerClaim?
    var aud: AudienceClaim?
    var nbf: NotBeforeClaim?
    var iat: IssuedAtClaim?

    /// Signature checks only: expiry, validity start, lifetime, issuer and audience are checked by ``UserAuthenticator`` against its clock.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
