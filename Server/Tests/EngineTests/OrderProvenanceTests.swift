import Foundation
import Testing

@testable import Engine

@Suite("Order provenance: what a payment carries to rebuild its order, read back only as written")
struct OrderProvenanceTests {
    @Test("a product and any visible user id come back byte for byte, through URL encoding and decoding alike")
    func roundTrip() throws {
        for user in ["alice", "用户:42~x/y+z=", "a", String(repeating: "u", count: 80)] {
            let written = OrderProvenance(productID: "coins.60_v2-x", userID: user)
            let text = try #require(written.text, "\(user)")
            #expect(text.utf8.count <= OrderProvenance.maxLength)
            #expect(OrderProvenance(text: text) == written)
            // Alipay URL-encodes passback_params; the text has nothing encoding changes.
            let encoded = try #require(
                text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~"))))
            #expect(encoded == text)
        }
    }

    @Test(
        "a user id that would pass WeChat Pay's 127 bytes gives no text: such an order is never rebuilt, only flagged")
    func tooLong() {
        #expect(OrderProvenance(productID: "coins60", userID: String(repeating: "长", count: 40)).text == nil)
        #expect(OrderProvenance(productID: "coins60", userID: String(repeating: "u", count: 87)).text == nil)
        #expect(OrderProvenance(productID: "coins60", userID: String(repeating: "u", count: 86)).text != nil)
    }

    @Test("anything but the server's own spelling is no provenance: nothing is guessed")
    func refusals() {
        let good = OrderProvenance(productID: "coins60", userID: "alice").text!
        #expect(good == "os1~coins60~YWxpY2U")
        for text in [
            "", "alice", "os1~coins60", "os1~coins60~", "os2~coins60~YWxpY2U", "os1~Coins60~YWxpY2U",
            "os1~coins60~YWxpY2U=", "os1~coins60~YWxpY2V", "os1~coins60~YWxp~Y2U", "os1~~YWxpY2U",
            "os1~coins60~YWxpY2U!", "OS1~coins60~YWxpY2U", "os1~coins60~" + String(repeating: "QUFB", count: 40),
        ] {
            #expect(OrderProvenance(text: text) == nil, "\(text)")
        }
    }
}
