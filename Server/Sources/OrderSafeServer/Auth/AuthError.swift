/// Why a request was not authenticated. Messages never echo the token.
enum AuthError: Error, Equatable, CustomStringConvertible {
    case missingToken
    case malformedToken
    case invalidSignature
    case expired
    case notYetValid
    case lifetimeTooLong
    case wrongAlgorithm
    case unsupportedExtension
    case wrongIssuer
    case wrongAudience
    case invalidSubject
    case invalidAdminKey

    var description: String {
        switch self {
        case .missingToken: "an Authorization: Bearer token is required"
        case .malformedToken: "the bearer token is not a well-formed JWT"
        case .invalidSignature: "the bearer token's signature or algorithm is not accepted"
        case .expired: "the bearer token has expired"
        case .notYetValid: "the bearer token is not valid yet (nbf or iat is in the future)"
        case .lifetimeTooLong: "the bearer token lives longer than auth.max_token_lifetime_seconds allows"
        case .wrongAlgorithm: "the bearer token's header names another algorithm than the configured one"
        case .unsupportedExtension:
            "the bearer token's header asks for a critical extension (crit) this server does not support"
        case .wrongIssuer: "the bearer token's issuer is not accepted"
        case .wrongAudience: "the bearer token's audience is not accepted"
        case .invalidSubject:
            "the bearer token's sub must be a user id of 1 to 128 visible characters (no spaces, controls or format characters)"
        case .invalidAdminKey: "a valid admin key is required"
        }
    }
}
