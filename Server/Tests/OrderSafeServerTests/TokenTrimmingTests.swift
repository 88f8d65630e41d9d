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

    @Test("the token of an Authorization value read by its bytes is the one read character by character")
    func bearerTokenAsCharacters() {
        func byCharacters(_ value: String) -> String? {
            guard value.count > 7, value.prefix(7).lowercased() == "bearer " else { return nil }
            return UserAuthenticator.trimmed(value.dropFirst(7))
        }
        let schemes = [
            "Bearer ", "bearer ", "BEARER ", "bEaReR ", "Bearer\t", "Bearer\u{0}", "Bearer\u{A0}", "Bearer", "Bearex ",
            "Basic ", "Bearer  ", "Bearer\u{301} ", "Bearer \u{301}", "Bearer\u{200B}", "Bearer\u{2003}", "",
        ]
        let tokens = [
            "", "a", "eyJ.eyJ.sig", " eyJ.x ", "x ", "\u{301}x", "x\u{301}", "e\u{301}", "é", "订", "\u{3000}tok",
            "tok\t",
            "~", "!", "\u{7F}", "a\u{0}", "\r\n", "x\r\n", "tok\u{200B}",
        ]
        for scheme in schemes {
            for token in tokens {
                let value = scheme + token
                #expect(
                    UserAuthenticator.bearerToken(value) == byCharacters(value),
                    "\(value.unicodeScalars.map { $0.value })")
            }
        }
    }
}
