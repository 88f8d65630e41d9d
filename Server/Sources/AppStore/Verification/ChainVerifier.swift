import Crypto
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SwiftASN1
import Synchronization
@_spi(FixedExpiryValidationTime) import X509

/// Verifies `x5c` chains: leaf → intermediate → a trusted root (by signature; `x5c[2]` is ignored, as Apple's
/// libraries do), with Apple's OIDs on the leaf and the intermediate, valid at the validation time.
struct ChainVerifier: Sendable {
    static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    let roots: [Certificate]

    /// A verified chain: the leaf's key and the interval in which every certificate of the chain is valid.
    struct Verified: Sendable {
        var leafKey: P256.Signing.PublicKey
        var validFrom: Date
        var validUntil: Date

        func covers(_ date: Date) -> Bool { validFrom <= date && date <= validUntil }
    }

    /// Verifies the chain offline at `validationTime`, then, with `online`, asks the certificates' OCSP responders.
    func verify(x5c: [String], at validationTime: Date, online: OnlineRevocationCheck? = nil)
        async throws(VerificationError) -> Verified
    {
        guard x5c.count == 3 else { throw .invalidChainLength(x5c.count) }
        let leaf = try Self.certificate(x5c[0])
        let intermediate = try Self.certificate(x5c[1])
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: validationTime)
            AppleOIDPolicy()
        }
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) {
        case .validCertificate(let chain):
            guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
                throw .invalidCertificate("the leaf certificate does not hold a P-256 key")
            }
            let certificates = Array(chain)
            try await online?.check(leaf: leaf, intermediate: intermediate, roots: roots, at: validationTime)
            return Verified(
                leafKey: key, validFrom: certificates.map(\.notValidBefore).max()!,
                validUntil: certificates.map(\.notValidAfter).min()!)
        case .couldNotValidate(let failures):
            throw .invalidChain(failures.first.map { "\($0.policyFailureReason)" } ?? "no chain to a trusted root")
        }
    }

    /// Whether `x5c` is signed, link by link, up to a root that is one of Apple's published roots (by fingerprint)
    /// or one of `roots` — whatever else its failure was (a date, an OID, a root this verifier was not given). A chain
    /// that anchors nowhere known is someone's own: no setting of this server would make it verify.
    func anchorsInKnownRoot(x5c: [String]) -> Bool {
        guard x5c.count == 3, let leaf = try? Self.certificate(x5c[0]),
            let intermediate = try? Self.certificate(x5c[1]), let root = try? Self.certificate(x5c[2]),
            let rootDER = Data(base64Encoded: x5c[2])
        else { return false }
        let known =
            AppleRootCertificates.fingerprints[AppleRootCertificates.fingerprint(Array(rootDER))] != nil
            || roots.contains(root)
        return known && root.publicKey.isValidSignature(intermediate.signature, for: intermediate)
            && intermediate.publicKey.isValidSignature(leaf.signature, for: leaf)
    }

    /// The leaf's P-256 key, not yet trusted: what the signature is checked with before the chain is validated.
    static func leafKey(_ base64: String) throws(VerificationError) -> P256.Signing.PublicKey {
        guard let key = P256.Signing.PublicKey(try certificate(base64).publicKey) else {
            throw .invalidCertificate("the leaf certificate does not hold a P-256 key")
        }
        return key
    }

    static func certificate(_ base64: String) throws(VerificationError) -> Certificate {
        guard let der = Data(base64Encoded: base64) else { throw .invalidCertificate("an x5c entry is not base64") }
        do {
            return try Certificate(derEncoded: Array(der))
        } catch {
            throw .invalidCertificate("an x5c entry is not an X.509 certificate")
        }
    }
}

/// The leaf must carry Apple's receipt-signing OID and the intermediate Apple's WWDR OID.
struct AppleOIDPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        let certificates = Array(chain)
        guard certificates.count == 3 else {
            return .failsToMeetPolicy(
                reason: "the chain must be leaf, intermediate and root, not \(certificates.count) certificates")
        }
        guard certificates[0].extensions[oid: ChainVerifier.leafOID] != nil else {
            return .failsToMeetPolicy(reason: "the leaf lacks Apple's OID 1.2.840.113635.100.6.11.1")
        }
        guard certificates[1].extensions[oid: ChainVerifier.intermediateOID] != nil else {
            return .failsToMeetPolicy(reason: "the intermediate lacks Apple's OID 1.2.840.113635.100.6.2.1")
        }
        return .meetsPolicy
    }
}

/// Verified chains by the exact JWS header that carried them: a typical JWS then costs one P-256 signature
/// check. Bounded (the oldest entry goes first) and expiring, so a revoked certificate stops being trusted.
public final class VerifiedChainCache: Sendable {
    struct Entry {
        var verified: ChainVerifier.Verified
        var storedAt: Date
    }

    /// A header's bytes, equal when every byte is (`memcmp`: comparing 3 KiB element by element was 0.5% of the
    /// server's samples under load); hashed by their count and their first ``hashedPrefix`` bytes (in Apple's
    /// headers, `{"alg":"ES256","x5c":["` and the leaf certificate's first 120 bytes, its serial number among them):
    /// hashing all of a 3 KiB header was 1% of the samples. Headers alike in that prefix share a bucket and are told
    /// apart by their bytes, among at most ``VerifiedChainCache/capacity`` entries.
    struct Key: Hashable {
        static let hashedPrefix = 256

        var header: ArraySlice<UInt8>

        static func == (a: Key, b: Key) -> Bool { ByteScan.equal(a.header, b.header) }

        func hash(into hasher: inout Hasher) {
            hasher.combine(header.count)
            header.prefix(Self.hashedPrefix).withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    private let entries = Mutex<[Key: Entry]>([:])
    let capacity: Int
    let lifetime: TimeInterval

    public init(capacity: Int = 32, lifetime: TimeInterval = 15 * 60) {
        self.capacity = capacity
        self.lifetime = lifetime
    }

    /// The chain cached for `header`, whatever the validation time (the caller checks ``ChainVerifier/Verified/covers(_:)``).
    func entry(_ header: ArraySlice<UInt8>, now: Date) -> ChainVerifier.Verified? {
        let key = Key(header: header)
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard now.timeIntervalSince(entry.storedAt) < lifetime else {
                entries[key] = nil
                return nil
            }
            return entry.verified
        }
    }

    func store(_ verified: ChainVerifier.Verified, for header: ArraySlice<UInt8>, now: Date) {
        let key = Key(header: ArraySlice(Array(header)))
        entries.withLock { entries in
            if entries.count >= capacity, entries[key] == nil,
                let oldest = entries.min(by: { $0.value.storedAt < $1.value.storedAt })
            {
                entries[oldest.key] = nil
            }
            entries[key] = Entry(verified: verified, storedAt: now)
        }
    }

    /// How many chains are cached (for tests and metrics).
    public var count: Int { entries.withLock { $0.count } }
}
