import Crypto
import Foundation
import SwiftASN1
import X509

/// The sandbox authority's OCSP responder (RFC 6960) for the leaves its intermediate issued: answers `good`,
/// or `revoked` for serials it was told about, signed by the intermediate itself (the issuer, as Apple's
/// responders do), echoing the request's nonce.
struct SandboxOCSPResponder: Sendable {
    let issuer: Certificate
    let issuerKey: P256.Signing.PrivateKey

    static let nonceOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 2]
    static let basicResponseOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 1]
    static let ecdsaWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]

    /// The DER response to a DER request: `malformedRequest` (status 1) for anything it cannot read.
    func respond(to request: [UInt8], revokedSerials: Set<[UInt8]>, now: Date) -> [UInt8] {
        guard let parsed = try? Self.parse(request) else { return Self.unsuccessful(status: 1) }
        do {
            return try successful(parsed, revokedSerials: revokedSerials, now: now)
        } catch {
            return Self.unsuccessful(status: 2)  // internalError
        }
    }

    /// What the responder needs of a request: each CertID as sent (echoed verbatim) with its serial, and the nonce
    /// extension (also echoed).
    struct Request {
        var certIDs: [(encoded: ArraySlice<UInt8>, serial: [UInt8])]
        var nonceExtension: ArraySlice<UInt8>?
    }

    static func parse(_ bytes: [UInt8]) throws -> Request {
        let root = try DER.parse(bytes)
        guard case .constructed(let outer) = root.content, let tbs = outer.first(where: { _ in true }),
            case .constructed(let tbsFields) = tbs.content
        else { throw ASN1Error.invalidASN1Object(reason: "not an OCSPRequest") }
        var request = Request(certIDs: [], nonceExtension: nil)
        for field in tbsFields {
            if field.identifier == .sequence, case .constructed(let list) = field.content {
                for single in list {
                    guard case .constructed(let singleFields) = single.content,
                        let certID = singleFields.first(where: { _ in true }),
                        case .constructed(let certFields) = certID.content
                    else { throw ASN1Error.invalidASN1Object(reason: "a Request without a CertID") }
                    let parts = Array(certFields)
                    guard parts.count == 4, case .primitive(let serial) = parts[3].content else {
                        throw ASN1Error.invalidASN1Object(reason: "a CertID without a serial number")
                    }
                    request.certIDs.append((certID.encodedBytes, Self.magnitude(serial)))
                }
            } else if field.identifier == ASN1Identifier(tagWithNumber: 2, tagClass: .contextSpecific),
                case .constructed(let wrapped) = field.content, let extensions = wrapped.first(where: { _ in true }),
                case .constructed(let list) = extensions.content
            {
                for item in list {
                    guard case .constructed(let parts) = item.content, let oid = parts.first(where: { _ in true }),
                        (try? ASN1ObjectIdentifier(derEncoded: oid)) == nonceOID
                    else { continue }
                    request.nonceExtension = item.encodedBytes
                }
            }
        }
        guard !request.certIDs.isEmpty else {
            throw ASN1Error.invalidASN1Object(reason: "an OCSPRequest without requests")
        }
        return request
    }

    private func successful(_ request: Request, revokedSerials: Set<[UInt8]>, now: Date) throws -> [UInt8] {
        var data = DER.Serializer()
        try data.appendConstructedNode(identifier: .sequence) { data in
            // responderID byName
            try data.serialize(issuer.subject, explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific)
            try data.serialize(Self.time(now))  // producedAt
            try data.appendConstructedNode(identifier: .sequence) { list in
                for certID in request.certIDs {
                    try list.appendConstructedNode(identifier: .sequence) { single in
                        single.serializeRawBytes(certID.encoded)
                        if revokedSerials.contains(certID.serial) {
                            try single.appendConstructedNode(
                                identifier: ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)
                            ) { info in
                                try info.serialize(Self.time(now - 3600))  // revocationTime
                            }
                        } else {
                            single.appendPrimitiveNode(
                                identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
                            ) { _ in }
                        }
                        try single.serialize(Self.time(now - 60))  // thisUpdate
                        try single.serialize(
                            Self.time(now + 3600), explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific)
                    }
                }
            }
            if let nonce = request.nonceExtension {
                data.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)) {
                    wrapper in
                    wrapper.appendConstructedNode(identifier: .sequence) { $0.serializeRawBytes(nonce) }
                }
            }
        }
        let tbs = data.serializedBytes
        let signature = try issuerKey.signature(for: tbs).derRepresentation

        var basic = DER.Serializer()
        try basic.appendConstructedNode(identifier: .sequence) { basic in
            basic.serializeRawBytes(tbs)
            try basic.appendConstructedNode(identifier: .sequence) { try $0.serialize(Self.ecdsaWithSHA256) }
            try basic.serialize(ASN1BitString(bytes: ArraySlice(signature)))
        }
        var response = DER.Serializer()
        try response.appendConstructedNode(identifier: .sequence) { response in
            response.appendPrimitiveNode(identifier: .enumerated) { $0.append(0) }  // successful
            try response.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific))
            { wrapper in
                try wrapper.appendConstructedNode(identifier: .sequence) { bytes in
                    try bytes.serialize(Self.basicResponseOID)
                    try bytes.serialize(ASN1OctetString(contentBytes: ArraySlice(basic.serializedBytes)))
                }
            }
        }
        return response.serializedBytes
    }

    /// A serial number's bytes without the sign-padding zeros DER may put in front, so a serial compares the
    /// same however it was encoded.
    static func magnitude(_ serial: some Collection<UInt8>) -> [UInt8] {
        Array(serial.drop { $0 == 0 })
    }

    static func unsuccessful(status: UInt8) -> [UInt8] {
        [0x30, 0x03, 0x0A, 0x01, status]
    }

    static func time(_ date: Date) throws -> GeneralizedTime {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return try GeneralizedTime(
            year: parts.year!, month: parts.month!, day: parts.day!, hours: parts.hour!, minutes: parts.minute!,
            seconds: parts.second!, fractionalSeconds: 0)
    }
}
