import Foundation

/// Linux stand-in for StoreKit 2's `VerificationResult`.
@frozen public enum VerificationResult<SignedType: Sendable>: Sendable {
    case unverified(SignedType, VerificationError)
    case verified(SignedType)

    public enum VerificationError: Error, Hashable, Sendable {
        case revokedCertificate, invalidCertificateChain, invalidDeviceVerification, invalidEncoding, invalidSignature,
            missingRequiredProperties
    }

    public var payloadValue: SignedType {
        get throws {
            switch self {
            case .verified(let value): return value
            case .unverified(_, let error): throw error
            }
        }
    }

    public var unsafePayloadValue: SignedType {
        switch self {
        case .verified(let value), .unverified(let value, _): value
        }
    }
}

extension VerificationResult where SignedType == Transaction {
    /// The compact JWS the store signed, as received.
    public var jwsRepresentation: String { unsafePayloadValue.signed }
}
