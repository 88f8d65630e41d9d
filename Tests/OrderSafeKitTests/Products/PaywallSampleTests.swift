import Foundation
import OrderSafeModel
import PaywallSample
import Testing

@testable import OrderSafeKit

/// The paywall sample's presentation (Examples/PaywallSample), which both its SwiftUI views show.
@Suite("The paywall sample")
@MainActor
struct PaywallSampleTests {
    @Test("each row has what 3.1.2 asks: price per period, the introductory offer and what follows, renewal terms")
    func rows() async throws {
        let h = await PaywallTests.harness()
        defer { h.cleanUp() }
        let model = OrderSafeViewModel(h.app())
        let paywall = try await model.loadPaywall()
        let rows = PaywallRows.rows(paywall, state: model.state, language: .english)
        let vip = try #require(rows.first { $0.id == "vip" })
        #expect(vip.price == "¥25.00 / month")
        #expect(vip.introductoryOffer == "Free for 1 week, then ¥25.00 / month")
        #expect(vip.offers.map(\.label) == ["¥6.00 / month for 3 months", "WINBACK_1"])
        #expect(vip.renewalTerms?.contains("Renews automatically at ¥25.00 / month") == true)
        #expect(!vip.isBuying)
        let coins = try #require(rows.first { $0.id == "coins" })
        #expect(coins.price == "¥6.00" && coins.renewalTerms == nil && coins.introductoryOffer == nil)
        let gift = try #require(rows.first { $0.id == "gift" })
        #expect(gift.price == "CNY 5.00", "not in the App Store: the catalog's price")
    }
}
