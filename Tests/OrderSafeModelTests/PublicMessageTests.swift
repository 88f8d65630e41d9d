import Foundation
import OrderSafeModel
import Testing

@Suite("Public messages: what callers outside are told")
struct PublicMessageTests {
    @Test("source paths and file/line fields are removed; long text is cut")
    func clean() {
        let leaked =
            #"not a certificate: CertificateError(code: unexpectedFieldType, file: "/work/main/.build/checkouts/swift-certificates/Sources/X509/Certificate.swift", line: 412)"#
        let cleaned = PublicMessage.clean(leaked)
        #expect(!cleaned.contains("/work") && !cleaned.contains(".swift") && !cleaned.contains("412"), "\(cleaned)")
        #expect(cleaned.hasPrefix("not a certificate: CertificateError(code: unexpectedFieldType"))
        #expect(PublicMessage.clean("at /src/Foo/Bar.swift:12 failed") == "at … failed")
        #expect(PublicMessage.clean(#"at C:/src/Bar.swift:7, then /a/b.swiftly"#) == "at …, then …ly")
        #expect(PublicMessage.clean("no product '/a/b' here") == "no product '/a/b' here")
        #expect(PublicMessage.clean(#"x file: "unclosed, line: 3 y"#) == #"x file: "unclosed, y"#)
        #expect(PublicMessage.clean(String(repeating: "x", count: 1000)).count == PublicMessage.maxLength)
        #expect(APIErrorResponse(code: "c", message: "see /a/b/C.swift:9").error.message == "see …")
    }

    /// A message carries what the caller sent: the regular expressions this replaced took 15 s over 16 KB of
    /// `/a/a/…` (each start of a path tried every later slash). Milliseconds now in a release build; the bound leaves
    /// room for a debug build in a loaded parallel run.
    @Test("time linear in what the caller sent: 16 KB of path-like text in well under the 15 s it took")
    func linear() {
        for hostile in [
            String(repeating: "/a", count: 8_192),
            "C:" + String(repeating: "/a.swif", count: 2_400),
            String(repeating: #"file: ""#, count: 2_400) + String(repeating: "line: 1,", count: 2_000),
            String(repeating: "/a/b.swift", count: 1_600) + " " + String(repeating: "/a", count: 5_000),
        ] {
            let start = ContinuousClock.now
            let cleaned = PublicMessage.clean(hostile)
            #expect(
                ContinuousClock.now - start < .seconds(5), "\(hostile.prefix(20))… took \(ContinuousClock.now - start)")
            #expect(cleaned.count <= PublicMessage.maxLength)
        }
    }

    /// The patterns the scanner replaced, applied to random text made of their pieces: the same text out, for the
    /// short messages where backtracking costs nothing.
    @Test("the same text as the regular expressions it replaced, on 20,000 random messages")
    func sameAsTheExpressions() throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let pieces = [
            "/", "/", "a", "Zb", ".swift", ".swift", "C:", ":", "12", " ", "  ", "\"", "'", ")", ",", "file: ",
            "line:", "function:", "column: ", ".", "x", "é", "\t", "…", "filex:", "swift",
        ]
        let path = /(?:[A-Za-z]:)?(?:\/[^\s"'\/),]+)+\/[^\s"'\/),]+\.swift(?::\d+)?/
        let field = /(?:file|function|line|column): *(?:"[^"]*"|\d+),? */
        // A seeded linear congruential generator (Knuth's MMIX constants): the same messages on every run.
        var state: UInt64 = 51
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<20_000 {
            let text = (0..<next(24)).map { _ in pieces[next(pieces.count)] }.joined()
            let expected = text.replacing(path, with: "…").replacing(field, with: "")
            #expect(PublicMessage.clean(text) == expected, "\(text.debugDescription)")
        }
    }
}
