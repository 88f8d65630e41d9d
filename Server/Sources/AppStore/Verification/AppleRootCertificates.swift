import Crypto
import Foundation
import SwiftASN1
import X509

/// Trusted roots, given by path as Apple's own libraries take them. In production only Apple's published roots
/// are accepted, checked by their SHA-256 fingerprints; the sandbox and tests may trust their own.
public enum AppleRootCertificates {
    /// Apple's published SHA-256 fingerprints (https://www.apple.com/certificateauthority/).
    public static let fingerprints: [String: String] = [
        "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179": "Apple Root CA - G3",
        "B0B1730ECBC7FF4505142C49F1295E6EDA6BCAED7E2C68C5BE91B5A11001F024": "Apple Inc. Root",
        "C2B9B042DD57830E7D117DAC55AC8AE19407D38E41D88F3215BC3A890444A050": "Apple Root CA - G2",
    ]

    /// The uppercase hex SHA-256 of a DER certificate.
    public static func fingerprint(_ der: [UInt8]) -> String {
        SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined()
    }

    /// Loads DER certificates; with `requireApple`, refuses any that is not one of Apple's published roots.
    public static func load(_ ders: [[UInt8]], requireApple: Bool) throws(VerificationError) -> [Certificate] {
        var roots: [Certificate] = []
        for der in ders {
            if requireApple, fingerprints[fingerprint(der)] == nil {
                throw .invalidCertificate("root \(fingerprint(der)) is not one of Apple's published root certificates")
            }
            do {
                roots.append(try Certificate(derEncoded: der))
            } catch {
                throw .invalidCertificate("a root certificate is not DER X.509: \(error)")
            }
        }
        return roots
    }

    /// Reads root certificates from files (DER, or PEM).
    public static func read(paths: [String], requireApple: Bool) throws(VerificationError) -> [Certificate] {
        var ders: [[UInt8]] = []
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .invalidCertificate("cannot read \(path)")
            }
            if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----"),
                let pem = try? Certificate(pemEncoded: text)
            {
                var serializer = DER.Serializer()
                do {
                    try serializer.serialize(pem)
                } catch {
                    throw .invalidCertificate("\(path): \(error)")
                }
                ders.append(serializer.serializedBytes)
            } else {
                ders.append(Array(data))
            }
        }
        return try load(ders, requireApple: requireApple)
    }
}
