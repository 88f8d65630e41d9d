import ChannelSupport
import Foundation
import Testing

/// `Base64URL.decode` decodes by itself what Foundation's standard decoder decodes once the alphabet's two symbols
/// are swapped back and `=` put only at the end (how it decoded before), byte for byte, and refuses what it refuses.
@Suite("Base64URL: decoded in one pass, as Foundation's decoder decodes it")
struct Base64URLTests {
    /// The reference: `=` dropped wherever it stands, `-` and `_` mapped to `+` and `/`, any other byte outside the
    /// alphabet refused, padded to whole groups and decoded by Foundation.
    static func foundation(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var standard: [UInt8] = []
        for byte in text {
            switch byte {
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.append(byte)
            case UInt8(ascii: "="): continue
            default: return nil
            }
        }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(standard)).map(Array.init)
    }

    /// How many texts made of `symbols`, of each of `lengths`, decode otherwise than ``foundation(_:)`` decodes them.
    static func mismatches(_ symbols: String, lengths: ClosedRange<Int>) -> Int {
        var texts: [[UInt8]] = [[]]
        var mismatches = 0
        for length in 1...lengths.upperBound {
            texts = texts.flatMap { text in symbols.utf8.map { text + [$0] } }
            guard lengths.contains(length) else { continue }
            for text in texts where Base64URL.decode(text[...]) != foundation(text) { mismatches += 1 }
        }
        return mismatches
    }

    @Test(
        "every text of up to five symbols from the edges of the alphabet, padding, the standard alphabet's two and a stranger"
    )
    func everyShortText() {
        // A and / are the alphabet's ends (0 and 63 as - and _), Q and R differ in a low bit a partial group drops.
        #expect(Self.mismatches("AQR_-z9=+/.", lengths: 1...5) == 0)
    }

    @Test("every text of six to eight symbols from a symbol, the alphabet's last, padding and a stranger")
    func everyTextAcrossGroups() {
        // Longer than a group, so that groups decoded four symbols at once meet padding, a stranger and a group begun
        // byte by byte at every offset.
        #expect(Self.mismatches("Q_=.", lengths: 6...8) == 0)
    }

    @Test("RFC 4648's vectors, unpadded and padded; a slice decodes from its own start")
    func vectors() {
        let vectors = [
            ("", ""), ("Zg", "f"), ("Zm8", "fo"), ("Zm9v", "foo"), ("Zm9vYg", "foob"), ("Zm9vYmE", "fooba"),
            ("Zm9vYmFy", "foobar"), ("Zg==", "f"), ("Zm8=", "fo"),
        ]
        for (text, decoded) in vectors {
            #expect(Base64URL.decode(Array(text.utf8)[...]) == Array(decoded.utf8), "\(text)")
        }
        #expect(Base64URL.decode(Array("..Zm9v".utf8)[2...]) == Array("foo".utf8))
        let bytes = (0...255).map { UInt8($0) }
        #expect(Base64URL.decode(Array(Base64URL.encode(bytes).utf8)[...]) == bytes)
    }
}
