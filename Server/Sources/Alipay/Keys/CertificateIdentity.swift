import Crypto
import Foundation
import SwiftASN1
import X509

/// The issuer, serial number and signature algorithm of a certificate, read without parsing its public key:
/// Alipay's root file carries an SM2 certificate that general X.509 libraries cannot load.
struct CertificateIdentity {
    let issuer: DistinguishedName
    let serialNumber: ArraySlice<UInt8>
    let signatureAlgorithm: ASN1ObjectIdentifier

    init(der: Data) throws(AlipayKeyError) {
        do {
            let root = try DER.parse(Array(der))
            guard case .constructed(let parts) = root.content else {
                throw AlipayKeyError.badCertificate("not a SEQUENCE")
            }
            var outer = parts.makeIterator()
            guard let tbs = outer.next(), let algorithm = outer.next(),
                case .constructed(let tbsParts) = tbs.content, case .constructed(let algorithmParts) = algorithm.content
            else { throw AlipayKeyError.badCertificate("truncated certificate") }
            var fields = tbsParts.makeIterator()
            var serialNode = fields.next()
            if serialNode?.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                serialNode = fields.next()  // skip the explicit version
            }
            _ = fields.next()  // the TBS signature algorithm
            var algorithmFields = algorithmParts.makeIterator()
            guard let serialNode, let issuerNode = fields.next(), let oidNode = algorithmFields.next() else {
                throw AlipayKeyError.badCertificate("truncated TBSCertificate")
            }
            serialNumber = try ArraySlice<UInt8>(derEncoded: serialNode)
            issuer = try DistinguishedName(derEncoded: issuerNode)
            signatureAlgorithm = try ASN1ObjectIdentifier(derEncoded: oidNode)
        } catch let error as AlipayKeyError {
            throw error
        } catch {
            throw .badCertificate("\(error)")
        }
    }

    /// SHA-1 or SHA-256 with RSA: the root certificates that count towards `alipay_root_cert_sn`.
    var isSignedWithRSA: Bool {
        signatureAlgorithm == [1, 2, 840, 113_549, 1, 1, 5] || signatureAlgorithm == [1, 2, 840, 113_549, 1, 1, 11]
    }

    /// MD5 (hex) of the issuer DN (`CN=…,OU=…,O=…,C=…`) followed by the decimal serial number.
    var serialNumberSN: String {
        let text = issuer.description + AlipayCertificateSN.decimal(serialNumber)
        return Insecure.MD5.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
