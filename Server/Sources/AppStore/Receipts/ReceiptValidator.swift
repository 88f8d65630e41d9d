import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509
import _CryptoExtras

/// Validates an app receipt's PKCS#7 signature (RSA with SHA-1 or SHA-256, over the content or over signed
/// attributes carrying its digest) and the signer's chain to a trusted root (Apple Inc. Root; Xcode's StoreKit
/// test certificate for Xcode receipts) at the receipt's own creation date: receipts outlive their signing
/// certificates, so "now" would refuse every old receipt. Apple's containers are BER with unsorted SETs, which
/// strict DER readers refuse; this reads them as they are.
public struct ReceiptValidator: Sendable {
    let roots: [Certificate]

    public init(rootCertificates: [Certificate]) {
        roots = rootCertificates
    }

    public enum Outcome: Sendable, Hashable {
        case valid(AppReceipt)
        case invalid(String)
    }

    /// Parses and validates; a receipt that cannot even be parsed throws.
    public func validate(_ der: [UInt8]) async throws(ReceiptParser.Error) -> Outcome {
        let container = try SignedContainer(der)
        let receipt = try ReceiptParser.decodePayload(container.content)
        guard let signer = container.signerCertificate else { return .invalid("no certificate matches the signer") }
        guard container.signatureVerifies(with: signer) else {
            return .invalid("the receipt signature does not verify")
        }
        let at = receipt.receiptCreationDateMS.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? Date()
        // Xcode signs with its self-signed StoreKit certificate: trusted only when it is itself a configured root.
        if roots.contains(signer) {
            return signer.notValidBefore <= at && at <= signer.notValidAfter
                ? .valid(receipt) : .invalid("the signer is outside its validity")
        }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: at)
        }
        switch await verifier.validate(leaf: signer, intermediates: CertificateStore(container.certificates)) {
        case .validCertificate: return .valid(receipt)
        case .couldNotValidate(let failures):
            return .invalid(
                "the signer's chain does not validate at the creation date: \(failures.first.map { "\($0.policyFailureReason)" } ?? "no chain")"
            )
        }
    }
}

/// The parts of a PKCS#7 SignedData a receipt check needs.
struct SignedContainer {
    let content: [UInt8]
    let certificates: [Certificate]
    let issuerAndSerial: (issuer: ArraySlice<UInt8>, serial: ArraySlice<UInt8>)?
    let digestAlgorithm: ASN1ObjectIdentifier
    /// The signed attributes re-tagged as a SET (what is signed), and the message digest they carry.
    let signedAttributes: (der: [UInt8], messageDigest: [UInt8]?)?
    let signature: [UInt8]

    static let sha1: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let messageDigest: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 4]

    init(_ der: [UInt8]) throws(ReceiptParser.Error) {
        do {
            let contentInfo = try BER.parse(der)
            let signedData = try Self.children(try Self.children(contentInfo)[1])[0]
            let fields = try Self.children(signedData)
            content = try ReceiptParser.payload(der)
            certificates = try fields.filter {
                $0.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
            }
            .flatMap { try Self.children($0) }
            .map { try Certificate(derEncoded: Array($0.encodedBytes)) }
            guard let signerInfos = fields.last, let signerInfo = try Self.children(signerInfos).first else {
                throw ReceiptParser.Error.notAReceipt("no signer")
            }
            let info = try Self.children(signerInfo)
            guard info.count >= 5 else { throw ReceiptParser.Error.notAReceipt("a short SignerInfo") }
            let sid = try? Self.children(info[1])
            issuerAndSerial = sid.flatMap { $0.count == 2 ? ($0[0].encodedBytes, $0[1].encodedBytes) : nil }
            digestAlgorithm = try ASN1ObjectIdentifier(berEncoded: try Self.children(info[2])[0])
            var index = 3
            if info[3].identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                var attributes = Array(info[3].encodedBytes)
                attributes[0] = 0x31  // [0] IMPLICIT → SET OF, as signed
                var digest: [UInt8]?
                for attribute in try Self.children(info[3]) {
                    let parts = try Self.children(attribute)
                    if try ASN1ObjectIdentifier(berEncoded: parts[0]) == Self.messageDigest,
                        let value = try Self.children(parts[1]).first,
                        case .primitive(let bytes) = value.content
                    {
                        digest = Array(bytes)
                    }
                }
                signedAttributes = (attributes, digest)
                index = 4
            } else {
                signedAttributes = nil
            }
            guard info.count > index + 1, case .primitive(let signature) = info[index + 1].content else {
                throw ReceiptParser.Error.notAReceipt("no signature")
            }
            self.signature = Array(signature)
        } catch let error as ReceiptParser.Error {
            throw error
        } catch {
            throw .notAReceipt("\(error)")
        }
    }

    /// The certificate named by the signer's issuer and serial number.
    var signerCertificate: Certificate? {
        guard let issuerAndSerial else { return certificates.first }
        return certificates.first { certificate in
            var issuer = DER.Serializer()
            guard (try? issuer.serialize(certificate.issuer)) != nil else { return false }
            return issuer.serializedBytes[...] == issuerAndSerial.issuer
                && Self.integerContent(issuerAndSerial.serial)
                    == Self.integerContent(certificate.serialNumber.bytes[...], encoded: false)
        }
    }

    func signatureVerifies(with certificate: Certificate) -> Bool {
        guard let key = try? _RSA.Signing.PublicKey(derRepresentation: certificate.publicKey.subjectPublicKeyInfoBytes),
            let signedBytes = signedBytes
        else { return false }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signature)
        switch digestAlgorithm {
        case Self.sha256:
            return key.isValidSignature(signature, for: SHA256.hash(data: signedBytes), padding: .insecurePKCS1v1_5)
        case Self.sha1:
            return key.isValidSignature(
                signature, for: Insecure.SHA1.hash(data: signedBytes), padding: .insecurePKCS1v1_5)
        default: return false
        }
    }

    /// The bytes the signature covers: the content, or the signed attributes once their digest matches the content.
    private var signedBytes: [UInt8]? {
        guard let signedAttributes else { return content }
        let digest: [UInt8] =
            switch digestAlgorithm {
            case Self.sha256: Array(SHA256.hash(data: content))
            case Self.sha1: Array(Insecure.SHA1.hash(data: content))
            default: []
            }
        return signedAttributes.messageDigest == digest ? signedAttributes.der : nil
    }

    private static func children(_ node: ASN1Node) throws -> [ASN1Node] {
        guard case .constructed(let children) = node.content else {
            throw ReceiptParser.Error.notAReceipt("expected a constructed node")
        }
        return Array(children)
    }

    /// The magnitude octets of an INTEGER (from its encoding, or already bare), leading zeros dropped.
    private static func integerContent(_ bytes: ArraySlice<UInt8>, encoded: Bool = true) -> ArraySlice<UInt8> {
        var content = bytes
        if encoded {
            guard let node = try? BER.parse(bytes), case .primitive(let inner) = node.content else { return [] }
            content = inner
        }
        while content.count > 1, content.first == 0 { content = content.dropFirst() }
        return content
    }
}
