import Foundation

/// JSON text written byte by byte, the very bytes Foundation's `JSONEncoder` writes with sorted keys (the caller
/// writes keys in order): the hot answers and rows are written this way, each held equal to `JSONEncoder`'s output by
/// a test of random values. Slashes are escaped (`\/`) as `JSONEncoder` does by default, or not, as
/// ``OrderSafeJSON/encoder()`` writes (`withoutEscapingSlashes`).
@_spi(OrderSafeServer) public struct JSONText {
    @_spi(OrderSafeServer) public private(set) var bytes: [UInt8] = []
    private let escapesSlashes: Bool

    @_spi(OrderSafeServer) public init(escapingSlashes: Bool = false, capacity: Int = 512) {
        escapesSlashes = escapingSlashes
        bytes.reserveCapacity(capacity)
    }

    @_spi(OrderSafeServer) public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Appends `raw` as it is: punctuation and keys, which the caller writes escaped.
    @_spi(OrderSafeServer) public mutating func append(_ raw: String) {
        bytes.append(contentsOf: raw.utf8)
    }

    /// Appends a JSON string.
    @_spi(OrderSafeServer) public mutating func append(string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            // Runs of bytes that need no escape are found sixteen bytes at a time and copied at once (a signed
            // transaction is kilobytes of them; byte by byte, the scan was 1.4% of a submission's CPU under load).
            // When slashes are not escaped the quote is looked for twice.
            let slash = escapesSlashes ? UInt8(ascii: "/") : UInt8(ascii: "\"")
            var start = 0
            while true {
                let index = ByteScan.firstJSONSpecial(in: utf8, from: start, also: slash)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                guard index < utf8.count else { break }
                appendEscaped(utf8[index])
                start = index + 1
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
        case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
        case UInt8(ascii: "/"): bytes.append(contentsOf: #"\/"#.utf8)
        case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
        case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
        case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
        case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
        case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: #"\u00"#.utf8)
            bytes.append(hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0x0F)])
        }
    }

    /// `"YYYY-MM-DDTHH:MM:SSZ"` in UTC, the second rounded down (as `JSONEncoder`'s `.iso8601`); dates are the
    /// ledger's own, kept within years 1…9999 so that no arithmetic can overflow.
    @_spi(OrderSafeServer) public mutating func append(date: Date) {
        let seconds = Int64(min(max(date.timeIntervalSince1970, -62_135_596_800), 253_402_300_799).rounded(.down))
        let (days, secondOfDay) = seconds.floorDivided(by: 86_400)
        let (year, month, day) = civilDate(daysSince1970: days)
        bytes.append(UInt8(ascii: "\""))
        appendDigits(year, 4)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(month, 2)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(day, 2)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, 2)
        bytes.append(contentsOf: #"Z""#.utf8)
    }

    private mutating func appendDigits(_ value: Int64, _ width: Int) {
        let text = String(value)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, width - text.utf8.count)))
        bytes.append(contentsOf: text.utf8)
    }
}

extension JSONText {
    /// Appends an order, as `Order` encodes itself.
    @_spi(OrderSafeServer) public mutating func append(order: Order) {
        append(#"{"amount":{"amount_minor":"#)
        append(String(order.amount.amountMinor))
        append(#","currency":"#)
        append(string: order.amount.currency.code)
        append(#"},"channel":"#)
        append(string: order.channel.rawValue)
        append(#","created_at":"#)
        append(date: order.createdAt)
        append(#","order_no":"#)
        append(string: order.orderNo)
        append(#","order_uuid":"#)
        append(string: order.orderUUID.text())
        append(#","product_id":"#)
        append(string: order.productID)
        append(order.sandbox ? #","sandbox":true"# : #","sandbox":false"#)
        append(#","status":"#)
        append(string: order.status.rawValue)
        append(#","updated_at":"#)
        append(date: order.updatedAt)
        append(#","user_id":"#)
        append(string: order.userID)
        append("}")
    }
}
