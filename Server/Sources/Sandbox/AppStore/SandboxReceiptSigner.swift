import Foundation
import SwiftASN1
@_spi(CMS) import X509
import _CryptoExtras

/// Writes and signs StoreKit 1 app receipts as the App Store does: the receipt's ASN.1 attribute SET inside a
/// PKCS#7 SignedData, RSA SHA-256, by a leaf carrying Apple's receipt OID under an intermediate and a root of the
/// sandbox's own (RSA, like Apple Inc. Root).
public struct SandboxReceiptSigner: Sendable {
    public let rootDER: [UInt8]
    let intermediate: Certificate
    let leaf: Certificate
    let leafKey: _RSA.Signing.PrivateKey

    /// One purchase in a receipt.
    public struct Purchase: Sendable, Codable {
        public var productID: String
        public var transactionID: String
        public var originalTransactionID: String
        public var purchaseDate: Date
        public var expiresDate: Date?
        public var quantity: Int

        public init(
            productID: String, transactionID: String, originalTransactionID: String? = nil, purchaseDate: Date,
            expiresDate: Date? = nil, quantity: Int = 1
        ) {
            self.productID = productID
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID ?? transactionID
            self.purchaseDate = purchaseDate
            self.expiresDate = expiresDate
            self.quantity = quantity
        }
    }

    public init(now: Date = Date()) throws {
        let rootKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let intermediateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        leafKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let start = now - 86400
        let end = now + 10 * 365 * 86400
        let rootName = try SandboxAppStoreCA.name("OrderSafe Sandbox Apple Inc. Root")
        let intermediateName = try SandboxAppStoreCA.name(
            "OrderSafe Sandbox Apple Worldwide Developer Relations CA (receipts)")
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: start,
            notValidAfter: end,
            issuer: rootName, subject: rootName, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            }, issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: start,
            notValidAfter: end,
            issuer: rootName, subject: intermediateName, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                Certificate.Extension(
                    oid: SandboxAppStoreCA.appleIntermediateOID, critical: false, value: [0x05, 0x00])
            }, issuerPrivateKey: .init(rootKey))
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: start,
            notValidAfter: end,
            issuer: intermediateName,
            subject: try SandboxAppStoreCA.name("OrderSafe Sandbox Mac App Store and iTunes Store Receipt Signing"),
            signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                Certificate.Extension(oid: SandboxAppStoreCA.appleLeafOID, critical: false, value: [0x05, 0x00])
            }, issuerPrivateKey: .init(intermediateKey))
        rootDER = try SandboxAppStoreCA.der(root)
    }

    init(rootDER: [UInt8], intermediate: Certificate, leaf: Certificate, leafKey: _RSA.Signing.PrivateKey) {
        self.rootDER = rootDER
        self.intermediate = intermediate
        self.leaf = leaf
        self.leafKey = leafKey
    }

    /// The signer kept in `folder` (`appstore-receipt-ca.json`, mode 0600), created when missing.
    public static func loadOrCreate(in folder: URL, now: Date = Date()) throws -> SandboxReceiptSigner {
        let file = folder.appendingPathComponent("appstore-receipt-ca.json")
        if let stored = StoredCredentials.load(file),
            let root = stored["root"].flatMap({ Data(base64Encoded: $0) }),
            let intermediate = stored["intermediate"].flatMap({ Data(base64Encoded: $0) }),
            let leaf = stored["leaf"].flatMap({ Data(base64Encoded: $0) }), let key = stored["leaf_key"]
        {
            return SandboxReceiptSigner(
                rootDER: Array(root), intermediate: try Certificate(derEncoded: Array(intermediate)),
                leaf: try Certificate(derEncoded: Array(leaf)),
                leafKey: try _RSA.Signing.PrivateKey(pemRepresentation: key))
        }
        let signer = try SandboxReceiptSigner(now: now)
        let stored = [
            "root": Data(signer.rootDER).base64EncodedString(),
            "intermediate": Data(try SandboxAppStoreCA.der(signer.intermediate)).base64EncodedString(),
            "leaf": Data(try SandboxAppStoreCA.der(signer.leaf)).base64EncodedString(),
            "leaf_key": signer.leafKey.pemRepresentation,
        ]
        try StoredCredentials.save(stored, to: file)
        return signer
    }

    /// A signed receipt (DER) for `bundleID` holding `purchases`, created at `createdAt`.
    public func receipt(bundleID: String, applicationVersion: String = "1", purchases: [Purchase], createdAt: Date)
        throws -> [UInt8]
    {
        var attributes: [(Int, [UInt8])] = [
            (0, try Self.string("ProductionSandbox", tag: .utf8String)),
            (2, try Self.string(bundleID, tag: .utf8String)),
            (3, try Self.string(applicationVersion, tag: .utf8String)), (4, Array(UUID().uuidString.utf8.prefix(16))),
            (12, try Self.date(createdAt)), (19, try Self.string("1.0", tag: .utf8String)),
        ]
        for purchase in purchases {
            var fields: [(Int, [UInt8])] = [
                (1701, try Self.integer(purchase.quantity)),
                (1702, try Self.string(purchase.productID, tag: .utf8String)),
                (1703, try Self.string(purchase.transactionID, tag: .utf8String)),
                (1704, try Self.date(purchase.purchaseDate)),
                (1705, try Self.string(purchase.originalTransactionID, tag: .utf8String)),
                (1706, try Self.date(purchase.purchaseDate)),
            ]
            if let expires = purchase.expiresDate { fields.append((1708, try Self.date(expires))) }
            attributes.append((17, try Self.set(fields)))
        }
        return try CMS.sign(
            try Self.set(attributes), signatureAlgorithm: .sha256WithRSAEncryption,
            additionalIntermediateCertificates: [intermediate],
            certificate: leaf, privateKey: .init(leafKey), detached: false)
    }

    /// SET OF SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }.
    static func set(_ attributes: [(Int, [UInt8])]) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .set) { set in
            for (type, value) in attributes {
                try set.appendConstructedNode(identifier: .sequence) { sequence in
                    try sequence.serialize(type)
                    try sequence.serialize(1)
                    try sequence.serialize(ASN1OctetString(contentBytes: value[...]))
                }
            }
        }
        return serializer.serializedBytes
    }

    static func string(_ text: String, tag: ASN1Identifier) throws -> [UInt8] {
        var serializer = DER.Serializer()
        serializer.appendPrimitiveNode(identifier: tag) { $0.append(contentsOf: Array(text.utf8)) }
        return serializer.serializedBytes
    }

    static func integer(_ value: Int) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(value)
        return serializer.serializedBytes
    }

    static func date(_ date: Date) throws -> [UInt8] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return try string(formatter.string(from: date), tag: .ia5String)
    }
}
