import Foundation
import OrderSafeModel
import Testing

@Suite("Channel names: an open set, parsed strictly")
struct ChannelTests {
    @Test("the built-in channels keep their wire names")
    func builtIn() throws {
        #expect(Channel.builtIn.map(\.rawValue) == ["appstore", "alipay", "wechatpay"])
        let decoded = try JSONDecoder().decode([Channel].self, from: Data(#"["wechatpay","toy"]"#.utf8))
        #expect(decoded == [.wechatPay, Channel(rawValue: "toy")])
        #expect(String(decoding: try JSONEncoder().encode([Channel.appStore]), as: UTF8.self) == #"["appstore"]"#)
    }

    @Test(
        "a name is 1–32 lowercase letters and digits, a letter first",
        arguments: ["", "Toy", "2pay", "pay-pal", "pay pal", "支付", String(repeating: "a", count: 33), "toy\u{0}"])
    func refused(name: String) {
        #expect(Channel(rawValue: name) == nil)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Channel.self, from: JSONEncoder().encode(name))
        }
    }

    @Test(
        "the longest and shortest names parse", arguments: ["a", "unionpay", "p2p", String(repeating: "z", count: 32)])
    func accepted(name: String) {
        #expect(Channel(rawValue: name)?.rawValue == name)
    }
}
