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
        #expect(PublicMessage.clean(String(repeating: "x", count: 1000)).count == PublicMessage.maxLength)
        #expect(APIErrorResponse(code: "c", message: "see /a/b/C.swift:9").error.message == "see …")
    }
}
