/// Why signed App Store data was refused, with Apple's names (as its own libraries report them).
public enum VerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not three base64url segments, a header without `alg: ES256` or `x5c`, or a payload that is not the JSON
    /// the kind of data requires.
    case invalidJWTFormat(String)
    /// A certificate of `x5c`, or a configured root, is not a usable certificate.
    case invalidCertificate(String)
    /// The ES256 signature does not verify with the leaf's key.
    case verificationFailure
    /// The bundle id (or, in production, the app Apple id) is not the one configured.
    case invalidAppIdentifier(String)
    /// Data from another environment (sandbox data at a production verifier, Xcode data anywhere but Xcode).
    case invalidEnvironment(String)
    /// `x5c` does not hold exactly three certificates.
    case invalidChainLength(Int)
    /// The chain does not lead to a trusted root with Apple's OIDs, or is not valid at the validation time.
    case invalidChain(String)
    /// Online checks could not be completed; trying again may succeed.
    case retryableVerificationFailure(String)

    /// Apple's name for the error.
    public var name: String {
        switch self {
        case .invalidJWTFormat: "INVALID_JWT_FORMAT"
        case .invalidCertificate: "INVALID_CERTIFICATE"
        case .verificationFailure: "VERIFICATION_FAILURE"
        case .invalidAppIdentifier: "INVALID_APP_IDENTIFIER"
        case .invalidEnvironment: "INVALID_ENVIRONMENT"
        case .invalidChainLength: "INVALID_CHAIN_LENGTH"
        case .invalidChain: "INVALID_CHAIN"
        case .retryableVerificationFailure: "RETRYABLE_VERIFICATION_FAILURE"
        }
    }

    public var description: String {
        switch self {
        case .invalidJWTFormat(let detail): "\(name): \(detail)"
        case .invalidCertificate(let detail): "\(name): \(detail)"
        case .verificationFailure: "\(name): the ES256 signature does not verify with the leaf certificate"
        case .invalidAppIdentifier(let detail): "\(name): \(detail)"
        case .invalidEnvironment(let detail): "\(name): \(detail)"
        case .invalidChainLength(let count): "\(name): x5c holds \(count) certificates, not 3"
        case .invalidChain(let detail): "\(name): \(detail)"
        case .retryableVerificationFailure(let detail): "\(name): \(detail)"
        }
    }
}
