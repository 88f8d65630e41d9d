import Crypto
import Foundation
import X509

/// Certificate-mode serial numbers: `app_cert_sn` and `alipay_root_cert_sn`, as Alipay computes them:
/// MD5 (hex) of the issuer DN (`CN=…,OU=…,O=…,C=…`) followed by the serial number in decimal.
public enum AlipayCertificateSN {
    /// The SN of the first certificate in `pem` (the app public-key certificate or the Alipay certificate).
    public static func serial(ofPEM pem: String) throws(AlipayKeyError) -> String {
        guard let der = try derCertificates(inPEM: pem).first else { throw .badCertificate("no certificate in PEM") }
        return try CertificateIdentity(der: der).serialNumberSN
    }

    /// The SN of a root certificate file: the SNs of its SHA-1/SHA-256-with-RSA certificates joined by `_`
    /// (the SM2 root Alipay ships alongside is skipped).
    public static func rootSerial(ofPEM pem: String) throws(AlipayKeyError) -> String {
        let rsa = try derCertificates(inPEM: pem).map(CertificateIdentity.init(der:)).filter(\.isSignedWithRSA)
        guard !rsa.isEmpty else { throw .noRSARootCertificate }
        return rsa.map(\.serialNumberSN).joined(separator: "_")
    }

    /// Every certificate in a PEM file. Alipay's files wrap lines at varying widths, which strict PEM parsers
    /// refuse, so the base64 between the markers is read with any whitespace.
    static func certificates(inPEM pem: String) throws(AlipayKeyError) -> [Certificate] {
        do {
            return try derCertificates(inPEM: pem).map { try Certificate(derEncoded: Array($0)) }
        } catch {
            throw .badCertificate("\(error)")
        }
    }

    static func derCertificates(inPEM pem: String) throws(AlipayKeyError) -> [Data] {
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        var certificates: [Data] = []
        var rest = pem[...]
        while let start = rest.range(of: begin) {
            guard let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex) else {
                throw .badCertificate("a BEGIN CERTIFICATE without its END")
            }
            guard let der = RSAKeyText.bareBase64(String(rest[start.upperBound..<stop.lowerBound])) else {
                throw .badCertificate("certificate body is not base64")
            }
            certificates.append(der)
            rest = rest[stop.upperBound...]
        }
        return certificates
    }

    /// A big-endian unsigned integer in decimal, by repeated division by 10.
    static func decimal(_ bytes: ArraySlice<UInt8>) -> String {
        var number = Array(bytes.drop { $0 == 0 })
        guard !number.isEmpty else { return "0" }
        var digits: [UInt8] = []
        while !number.isEmpty {
            var remainder = 0
            var quotient: [UInt8] = []
            quotient.reserveCapacity(number.count)
            for byte in number {
                let value = remainder * 256 + Int(byte)
                let digit = UInt8(value / 10)
                remainder = value % 10
                if !(quotient.isEmpty && digit == 0) { quotient.append(digit) }
            }
            digits.append(UInt8(remainder))
            number = quotient
        }
        return String(digits.reversed().map { Character(String($0)) })
    }
}
