import AppStore
import ChannelSupport
import Crypto
import Foundation
import SwiftASN1
import X509

/// The sandbox App Store's certificate authority: a root, an intermediate and a leaf carrying Apple's OIDs
/// (intermediate `1.2.840.113635.100.6.2.1`, leaf `1.2.840.113635.100.6.11.1`), P-256 throughout, as Apple's
/// chain is built. Generated on first use and kept in a folder, so the merchant can trust its root. Leaves name
/// the sandbox's OCSP responder (``ocspURL``), as Apple's leaves name theirs.
public struct SandboxAppStoreCA: Sendable {
    public let rootDER: [UInt8]
    public let intermediateDER: [UInt8]
    public let leafDER: [UInt8]
    let leafKey: P256.Signing.PrivateKey
    let intermediateKey: P256.Signing.PrivateKey
    /// The header of every JWS it signs, encoded once.
    let encodedHeader: String

    /// Where leaves say their status is answered; the sandbox serves it at this path (``SandboxAppStore/handle``).
    public static let ocspURL = "http://ocsp.sandbox.ordersafe.invalid/sandbox/appstore/ocsp"

    static let appleLeafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let appleIntermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// A new authority valid from a day before `now` for ten years.
    public init(now: Date = Date()) throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let start = now - 86400
        let end = now + 10 * 365 * 86400
        let rootName = try Self.name("OrderSafe Sandbox Apple Root CA")
        let intermediateName = try Self.name("OrderSafe Sandbox Apple Worldwide Developer Relations CA")
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: start,
            notValidAfter: end,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: .init(rootKey.publicKey))
            }, issuerPrivateKey: .init(rootKey))
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: start,
            notValidAfter: end,
            issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: .init(intermediateKey.publicKey))
                AuthorityKeyIdentifier(
                    keyIdentifier: SubjectKeyIdentifier(hash: .init(rootKey.publicKey)).keyIdentifier)
                Certificate.Extension(oid: Self.appleIntermediateOID, critical: false, value: [0x05, 0x00])
            }, issuerPrivateKey: .init(rootKey))
        self.init(
            rootDER: try Self.der(root), intermediateDER: try Self.der(intermediate),
            leafDER: try Self.leaf(key: leafKey, issuerKey: intermediateKey, from: start, to: end), leafKey: leafKey,
            intermediateKey: intermediateKey)
    }

    init(
        rootDER: [UInt8], intermediateDER: [UInt8], leafDER: [UInt8], leafKey: P256.Signing.PrivateKey,
        intermediateKey: P256.Signing.PrivateKey
    ) {
        self.rootDER = rootDER
        self.intermediateDER = intermediateDER
        self.leafDER = leafDER
        self.leafKey = leafKey
        self.intermediateKey = intermediateKey
        encodedHeader = Self.encodedHeader(leafDER: leafDER, intermediateDER: intermediateDER, rootDER: rootDER)
    }

    /// The same authority signing with a new leaf valid only from `start` to `end` (an expired leaf, for faults).
    public func withLeaf(validFrom start: Date, to end: Date) throws -> SandboxAppStoreCA {
        let key = P256.Signing.PrivateKey()
        return SandboxAppStoreCA(
            rootDER: rootDER, intermediateDER: intermediateDER,
            leafDER: try Self.leaf(key: key, issuerKey: intermediateKey, from: start, to: end),
            leafKey: key, intermediateKey: intermediateKey)
    }

    static func leaf(key: P256.Signing.PrivateKey, issuerKey: P256.Signing.PrivateKey, from start: Date, to end: Date)
        throws -> [UInt8]
    {
        try der(
            Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: start,
                notValidAfter: end,
                issuer: try name("OrderSafe Sandbox Apple Worldwide Developer Relations CA"),
                subject: try name("OrderSafe Sandbox StoreKit Signing"),
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    AuthorityKeyIdentifier(
                        keyIdentifier: SubjectKeyIdentifier(hash: .init(issuerKey.publicKey)).keyIdentifier)
                    Certificate.Extension(oid: appleLeafOID, critical: false, value: [0x05, 0x00])
                    AuthorityInformationAccess([
                        .init(method: .ocspServer, location: .uniformResourceIdentifier(ocspURL))
                    ])
                }, issuerPrivateKey: .init(issuerKey)))
    }

    /// The leaf's serial number, as the OCSP responder compares serials.
    var leafSerial: [UInt8] {
        get throws { SandboxOCSPResponder.magnitude(try Certificate(derEncoded: leafDER).serialNumber.bytes) }
    }

    var ocspResponder: SandboxOCSPResponder {
        get throws {
            SandboxOCSPResponder(issuer: try Certificate(derEncoded: intermediateDER), issuerKey: intermediateKey)
        }
    }

    /// The authority kept in `folder` (`appstore-ca.json`, mode 0600), created when missing. A leaf stored by
    /// an older build, without an OCSP responder, is replaced by one that has it (same root and intermediate).
    public static func loadOrCreate(in folder: URL, now: Date = Date()) throws -> SandboxAppStoreCA {
        let file = folder.appendingPathComponent("appstore-ca.json")
        if let stored = StoredCredentials.load(file),
            let root = stored["root"].flatMap({ Data(base64Encoded: $0) }),
            let intermediate = stored["intermediate"].flatMap({ Data(base64Encoded: $0) }),
            let leaf = stored["leaf"].flatMap({ Data(base64Encoded: $0) }), let key = stored["leaf_key"],
            let intermediateKey = stored["intermediate_key"]
        {
            let authority = SandboxAppStoreCA(
                rootDER: Array(root), intermediateDER: Array(intermediate), leafDER: Array(leaf),
                leafKey: try P256.Signing.PrivateKey(pemRepresentation: key),
                intermediateKey: try P256.Signing.PrivateKey(pemRepresentation: intermediateKey))
            guard try Certificate(derEncoded: authority.leafDER).extensions.authorityInformationAccess == nil else {
                return authority
            }
            let intermediateCertificate = try Certificate(derEncoded: authority.intermediateDER)
            let renewed = try authority.withLeaf(
                validFrom: intermediateCertificate.notValidBefore, to: intermediateCertificate.notValidAfter)
            try renewed.save(to: file)
            return renewed
        }
        let authority = try SandboxAppStoreCA(now: now)
        try authority.save(to: file)
        return authority
    }

    private func save(to file: URL) throws {
        let authority = self
        let stored = [
            "root": Data(authority.rootDER).base64EncodedString(),
            "intermediate": Data(authority.intermediateDER).base64EncodedString(),
            "leaf": Data(authority.leafDER).base64EncodedString(), "leaf_key": authority.leafKey.pemRepresentation,
            "intermediate_key": authority.intermediateKey.pemRepresentation,
        ]
        try StoredCredentials.save(stored, to: file)
    }

    /// Signs `payload` (JSON text) as the App Store signs transactions, renewal info, notifications and app
    /// transactions: ES256 with `x5c` = [leaf, intermediate, root].
    public func sign(_ payload: String) throws -> String {
        let input = encodedHeader + "." + Base64URL.encode(Data(payload.utf8))
        let signature = try leafKey.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// The protected header every JWS of this authority carries (`ES256` and the `x5c` chain), base64url.
    static func encodedHeader(leafDER: [UInt8], intermediateDER: [UInt8], rootDER: [UInt8]) -> String {
        let header =
            #"{"alg":"ES256","x5c":["\#(Data(leafDER).base64EncodedString())","\#(Data(intermediateDER).base64EncodedString())","\#(Data(rootDER).base64EncodedString())"]}"#
        return Base64URL.encode(Data(header.utf8))
    }

    /// Signs a JSON object.
    func sign(payload: [String: Any]) throws -> String { try signedJSON(payload: payload).jws }

    /// ``sign(payload:)``, with the JSON text it signed. Its keys are in no order (as Apple's are in none a verifier
    /// may rely on): sorting them cost more than the signature (Foundation compares keys through ICU collation).
    func signedJSON(payload: [String: Any]) throws -> (jws: String, json: String) {
        let json = String(
            decoding: try JSONSerialization.data(withJSONObject: payload, options: [.withoutEscapingSlashes]),
            as: UTF8.self)
        return (try sign(json), json)
    }

    static func name(_ commonName: String) throws -> DistinguishedName {
        try DistinguishedName {
            CountryName("US")
            OrganizationName("OrderSafe Sandbox")
            CommonName(commonName)
        }
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
