import Foundation
import Testing

@testable import OrderSafeServer

/// The bearer token is read without the tabs and spaces around it, exactly as Foundation's
/// `trimmingCharacters(in: .whitespaces)` reads it, without its cost.
@Suite("Authentication: the token's surrounding blanks")
struct TokenTrimmingTests {
    @Test("the same text as Foundation's trimming, for blanks of every kind around, inside and alone")
    func sameAsFoundation() {
        let blanks = [" ", "\t", "\u{00A0}", "\u{2003}", "\u{3000}", "\u{202F}", "\u{200B}", "\u{1680}"]
        let others = ["a", "é", "订", "👍🏽", "\n", "\r", "\u{200C}", "\u{2028}", "e\u{301}", ".", ""]
        var cases: [String] = [""]
        for blank in blanks {
            for other in others {
                cases += [
                    blank + other, other + blank, blank + other + blank, blank + blank + other + blank + other + blank,
                    blank + blank,
                ]
            }
        }
        cases.append(" \t eyJ.eyJ.sig \u{3000}")
        for text in cases {
            #expect(
                UserAuthenticator.trimmed(Substring(text)) == text.trimmingCharacters(in: .whitespaces),
                "\(text.unicodeScalars.map { $0.value })")
        }
    }

    @Test("every scalar of the Basic Multilingual Plane is a blank to both or to neither")
    func everyScalar() {
        var differing: [UInt32] = []
        for value in UInt32(0)...0xFFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "\(scalar)a\(scalar)"
            if UserAuthenticator.trimmed(Substring(text)) != text.trimmingCharacters(in: .whitespaces) {
                differing.append(value)
            }
        }
        #expect(differing.isEmpty, "\(differing.prefix(20))")
    }
}
