import Foundation
import OrderSafeModel
import Testing

@Suite("Money and currency codes")
struct MoneyTests {
    @Test(
        "decimal strings come from integer minor units",
        arguments: [
            (600, "CNY", "6.00"), (10, "CNY", "0.10"), (1, "CNY", "0.01"), (0, "USD", "0.00"), (-150, "USD", "-1.50"),
            (500, "JPY", "500"), (1234, "KWD", "1.234"), (Int64.max, "CNY", "92233720368547758.07"),
        ] as [(Int64, String, String)])
    func decimalString(minor: Int64, currency: String, expected: String) {
        #expect(Money(amountMinor: minor, currency: CurrencyCode(currency)!).decimalString == expected)
    }

    @Test("Int64.min formats without overflowing")
    func minimum() {
        #expect(Money(amountMinor: .min, currency: .cny).decimalString == "-92233720368547758.08")
    }

    @Test(
        "currency codes are exactly three uppercase ASCII letters", arguments: ["cny", "CN", "CNYY", "C1Y", "ＣＮＹ", ""])
    func invalidCurrency(code: String) {
        #expect(CurrencyCode(code) == nil)
    }

    @Test("money round-trips through JSON as amount_minor and currency")
    func json() throws {
        let money = Money(amountMinor: 600, currency: .cny)
        let data = try OrderSafeJSON.encoder().encode(money)
        #expect(String(decoding: data, as: UTF8.self) == #"{"amount_minor":600,"currency":"CNY"}"#)
        #expect(try OrderSafeJSON.decoder().decode(Money.self, from: data) == money)
        #expect(throws: DecodingError.self) {
            try OrderSafeJSON.decoder().decode(Money.self, from: Data(#"{"amount_minor":6.5,"currency":"CNY"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try OrderSafeJSON.decoder().decode(Money.self, from: Data(#"{"amount_minor":600,"currency":"yuan"}"#.utf8))
        }
    }
}
