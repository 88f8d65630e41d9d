import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SwiftASN1

/// Reads App Store receipts: the PKCS#7 (CMS SignedData) container in BER, indefinite lengths included, and the
/// receipt's ASN.1 attributes. Parsing alone trusts nothing; ``ReceiptValidator`` checks the signature and chain.
public enum ReceiptParser {
    public enum Error: Swift.Error, Hashable, CustomStringConvertible {
        case notAReceipt(String)
        case malformed(String)

        public var description: String {
            switch self {
            case .notAReceipt(let detail): "not an App Store receipt: \(detail)"
            case .malformed(let detail): "malformed receipt: \(detail)"
            }
        }
    }

    /// At most this many bytes (a receipt with hundreds of renewals is about 100 KB).
    public static let maxBytes = 4 << 20

    /// The DER/BER bytes of a receipt given as base64 text or as binary.
    public static func bytes(_ data: [UInt8]) throws(Error) -> [UInt8] {
        guard !data.isEmpty, data.count <= maxBytes else {
            throw .notAReceipt("empty or larger than \(maxBytes) bytes")
        }
        if data.first == 0x30 { return data }
        let text = String(decoding: data, as: UTF8.self).filter { !$0.isWhitespace }
        guard let decoded = Data(base64Encoded: text), decoded.first == 0x30 else {
            throw .notAReceipt("neither DER nor base64 of DER")
        }
        return Array(decoded)
    }

    /// Decodes a receipt (DER/BER bytes).
    public static func parse(_ der: [UInt8]) throws(Error) -> AppReceipt {
        try decodePayload(try payload(der))
    }

    /// The signed content of the PKCS#7 container: ContentInfo → [0] SignedData → encapContentInfo → [0] OCTET STRING.
    static func payload(_ der: [UInt8]) throws(Error) -> [UInt8] {
        if let fast = try? fastPayload(der) { return fast }
        do {
            let contentInfo = try BER.parse(der)
            let signedData = try child(try child(contentInfo, 1, "ContentInfo"), 0, "[0] SignedData")
            let encapsulated = try child(signedData, 2, "encapContentInfo")
            let content = try child(try child(encapsulated, 1, "eContent"), 0, "eContent OCTET STRING")
            return try octets(content)
        } catch let error as Error {
            throw error
        } catch {
            throw .notAReceipt("\(error)")
        }
    }

    /// The same walk over raw TLVs, without parsing the certificates: nil-throwing on anything unexpected.
    private static func fastPayload(_ der: [UInt8]) throws -> [UInt8] {
        var reader = TLVReader(der[...])
        func into(_ element: TLVReader.Element, tag: UInt8) throws -> TLVReader {
            guard element.tag == tag else { throw TLVReader.Failure.malformed }
            return TLVReader(element.value)
        }
        var contentInfo = try into(try reader.next(), tag: 0x30)
        guard try contentInfo.next().tag == 0x06 else { throw TLVReader.Failure.malformed }
        var explicit = try into(try contentInfo.next(), tag: 0xA0)
        var signedData = try into(try explicit.next(), tag: 0x30)
        for expected: UInt8 in [0x02, 0x31] {
            let element = try signedData.next()
            guard element.tag == expected, !element.isIndefinite else { throw TLVReader.Failure.malformed }
        }
        var encapsulated = try into(try signedData.next(), tag: 0x30)
        guard try encapsulated.next().tag == 0x06 else { throw TLVReader.Failure.malformed }
        var content = try into(try encapsulated.next(), tag: 0xA0)
        let octets = try content.next()
        guard octets.tag == 0x04, !octets.isIndefinite else { throw TLVReader.Failure.malformed }
        return Array(octets.value)
    }

    static func decodePayload(_ payload: [UInt8]) throws(Error) -> AppReceipt {
        var receipt = AppReceipt(
            receiptType: nil, bundleID: "", applicationVersion: nil, originalApplicationVersion: nil,
            receiptCreationDateMS: nil,
            expirationDateMS: nil, opaque: [], sha1: [], bundleIDDER: [], inApp: [])
        var sawBundle = false
        for (type, value) in try attributes(payload) {
            switch type {
            case 0: receipt.receiptType = try string(value)
            case 2:
                receipt.bundleID = try string(value)
                receipt.bundleIDDER = Array(value)
                sawBundle = true
            case 3: receipt.applicationVersion = try string(value)
            case 4: receipt.opaque = Array(value)
            case 5: receipt.sha1 = Array(value)
            case 12: receipt.receiptCreationDateMS = try date(value)
            case 17: receipt.inApp.append(try purchase(value))
            case 19: receipt.originalApplicationVersion = try string(value)
            case 21: receipt.expirationDateMS = try date(value)
            default: continue
            }
        }
        guard sawBundle else { throw .malformed("no bundle id (field 2)") }
        return receipt
    }

    static func purchase(_ value: ArraySlice<UInt8>) throws(Error) -> AppReceipt.InAppPurchase {
        var purchase = AppReceipt.InAppPurchase()
        for (type, field) in try attributes(Array(value)) {
            switch type {
            case 1701: purchase.quantity = try integer(field)
            case 1702: purchase.productID = try string(field)
            case 1703: purchase.transactionID = try string(field)
            case 1704: purchase.purchaseDateMS = try date(field)
            case 1705: purchase.originalTransactionID = try string(field)
            case 1706: purchase.originalPurchaseDateMS = try date(field)
            case 1708: purchase.expiresDateMS = try date(field)
            case 1711: purchase.webOrderLineItemID = try integer(field)
            case 1712: purchase.cancellationDateMS = try date(field)
            case 1713: purchase.isTrialPeriod = try integer(field).map { $0 != 0 }
            case 1719: purchase.isInIntroOfferPeriod = try integer(field).map { $0 != 0 }
            case 1721: purchase.promotionalOfferID = try string(field)
            default: continue
            }
        }
        return purchase
    }

    /// The receipt's SET of SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING } (DER).
    static func attributes(_ bytes: [UInt8]) throws(Error) -> [(Int, ArraySlice<UInt8>)] {
        do {
            var outer = TLVReader(bytes[...])
            let set = try outer.next()
            guard set.tag == 0x31, !set.isIndefinite, outer.isAtEnd else {
                throw Error.malformed("the payload is not a DER SET")
            }
            var items = TLVReader(set.value)
            var result: [(Int, ArraySlice<UInt8>)] = []
            result.reserveCapacity(32)
            while !items.rest.isEmpty {
                let item = try items.next()
                guard item.tag == 0x30, !item.isIndefinite else {
                    throw Error.malformed("an attribute is not a SEQUENCE")
                }
                var fields = TLVReader(item.value)
                let type = try fields.next()
                let version = try fields.next()
                let value = try fields.next()
                guard type.tag == 0x02, version.tag == 0x02, value.tag == 0x04, let number = integerValue(type.value),
                    number >= 0, number < Int64(Int32.max)
                else { throw Error.malformed("an attribute is not (INTEGER, INTEGER, OCTET STRING)") }
                result.append((Int(number), value.value))
            }
            return result
        } catch let error as Error {
            throw error
        } catch {
            throw .malformed("truncated or mis-encoded attributes")
        }
    }

    /// A two's-complement INTEGER's content, within Int64.
    private static func integerValue(_ content: ArraySlice<UInt8>) -> Int64? {
        guard !content.isEmpty, content.count <= 8 else { return nil }
        var value: Int64 = content.first! & 0x80 != 0 ? -1 : 0
        for byte in content { value = value << 8 | Int64(byte) }
        return value
    }

    private static func child(_ node: ASN1Node, _ index: Int, _ what: String) throws(Error) -> ASN1Node {
        guard case .constructed(let children) = node.content else { throw .notAReceipt("\(what) is not constructed") }
        var iterator = children.makeIterator()
        for _ in 0..<index { _ = iterator.next() }
        guard let found = iterator.next() else { throw .notAReceipt("\(what) is missing") }
        return found
    }

    /// An OCTET STRING's bytes, primitive or (BER) constructed from segments.
    private static func octets(_ node: ASN1Node) throws(Error) -> [UInt8] {
        switch node.content {
        case .primitive(let bytes): return Array(bytes)
        case .constructed(let segments):
            var bytes: [UInt8] = []
            for segment in segments { bytes += try octets(segment) }
            return bytes
        }
    }

    /// A value whose content is a DER UTF8String or IA5String.
    static func string(_ value: ArraySlice<UInt8>) throws(Error) -> String {
        var reader = TLVReader(value)
        guard let element = try? reader.next(), element.tag == 0x0C || element.tag == 0x16, !element.isIndefinite,
            reader.rest.isEmpty,
            let text = UTF8Strict.string(element.value)
        else { throw .malformed("a string field is not a UTF8String or IA5String") }
        return text
    }

    static func integer(_ value: ArraySlice<UInt8>) throws(Error) -> Int64? {
        var reader = TLVReader(value)
        guard let element = try? reader.next(), element.tag == 0x02, !element.isIndefinite, reader.rest.isEmpty,
            let number = integerValue(element.value)
        else { throw .malformed("an integer field is not an INTEGER") }
        return number
    }

    /// RFC 3339 dates as receipts write them (`2024-02-23T17:27:16Z`, Xcode's `+0100` offsets); empty means none.
    static func date(_ value: ArraySlice<UInt8>) throws(Error) -> Int64? {
        let text = try string(value)
        guard !text.isEmpty else { return nil }
        guard let date = ReceiptDate.parse(text) else { throw .malformed("'\(text)' is not an RFC 3339 date") }
        return date.millisecondsSince1970
    }
}

/// RFC 3339 dates as receipts write them, parsed by hand (receipt parsing is hot, a formatter is not):
/// `YYYY-MM-DDTHH:MM:SS`, optional fraction, then `Z`, `±HH:MM` or `±HHMM`.
enum ReceiptDate {
    static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= b.count else { return nil }
            var value = 0
            for byte in b[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var milliseconds = 0
        if b[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < b.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[index]) {
                if digits < 3 { milliseconds = milliseconds * 10 + Int(b[index] - UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            if digits < 3 { for _ in digits..<3 { milliseconds *= 10 } }
        }
        guard index < b.count else { return nil }
        var offset = 0
        switch b[index] {
        case UInt8(ascii: "Z"):
            guard index + 1 == b.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = b[index] == UInt8(ascii: "+") ? 1 : -1
            let rest = b.count - index - 1
            guard let hours = number(index + 1..<index + 3) else { return nil }
            let minutes: Int?
            if rest == 5, b[index + 3] == UInt8(ascii: ":") {
                minutes = number(index + 4..<index + 6)
            } else if rest == 4 {
                minutes = number(index + 3..<index + 5)
            } else {
                return nil
            }
            guard let minutes, hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        default:
            return nil
        }
        // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + Double(milliseconds) / 1000)
    }
}

/// Strict UTF-8 through contiguous storage (ASCII directly).
enum UTF8Strict {
    static func string(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { buffer in
            var high: UInt8 = 0
            for byte in buffer { high |= byte }
            return high < 0x80 ? String(decoding: buffer, as: UTF8.self) : String(validating: buffer, as: UTF8.self)
        }
    }
}
