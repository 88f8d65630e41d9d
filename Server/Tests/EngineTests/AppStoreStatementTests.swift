import ChannelSupport
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import Testing

@testable import AppStore
@testable import Engine

@Suite("App Store statement: a day listed from the App Store's histories")
struct AppStoreStatementTests {
    static func transaction(_ fields: String) throws -> JWSTransaction {
        try JWSTransaction(try JSONObject(Array(fields.utf8)))
    }

    @Test("a price in milli-units becomes minor units exactly, or none at all")
    func prices() throws {
        for (fields, expected) in [
            (#"{"price":6000,"currency":"CNY"}"#, Money(amountMinor: 600, currency: .cny)),
            (#"{"price":10990,"currency":"USD"}"#, Money(amountMinor: 1099, currency: .usd)),
            (#"{"price":120000,"currency":"JPY"}"#, Money(amountMinor: 120, currency: CurrencyCode("JPY")!)),
            (#"{"price":1234,"currency":"KWD"}"#, Money(amountMinor: 1234, currency: CurrencyCode("KWD")!)),
        ] {
            #expect(AppStorePurchase.charged(try Self.transaction(fields)) == expected, "\(fields)")
        }
        for fields in [
            #"{"price":10995,"currency":"USD"}"#, #"{"price":6000}"#, #"{"currency":"CNY"}"#,
            #"{"price":6000,"currency":"cny"}"#, #"{"price":-6000,"currency":"CNY"}"#,
        ] {
            #expect(AppStorePurchase.charged(try Self.transaction(fields)) == nil, "\(fields)")
        }
    }

    /// Apple's own transaction fixture (apple/app-store-server-library-swift @ 8468d10f,
    /// Tests/AppStoreServerLibraryTests/resources/models/signedTransaction.json), read in place from
    /// `../shared/vectors/appstore/models/`: `price` 10990, `currency` USD, `offerType` 1, `offerIdentifier` abc.123.
    static let appleFixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/vectors/appstore/models/signedTransaction.json")

    @Test(
        "Apple's own transaction fixture: USD 10.99 charged, an introductory offer",
        .enabled(if: FileManager.default.fileExists(atPath: appleFixture.path)))
    func applesFixture() throws {
        let transaction = try JWSTransaction(try JSONObject(Array(try Data(contentsOf: Self.appleFixture))))
        #expect(AppStorePurchase.charged(transaction) == Money(amountMinor: 1099, currency: .usd))
        #expect(AppStorePurchase.offer(transaction) == "introductory")
        #expect(AppStorePurchase(transaction)?.charged == Money(amountMinor: 1099, currency: .usd))
    }

    @Test(
        "each transaction once, in its newest signed form: a payment on its purchase day, a refund on its revocation day; a family-shared one is no payment"
    )
    func entries() throws {
        let day = StatementDay("2026-11-25")!
        let start = day.start(utcOffset: 0).millisecondsSince1970
        let token = UUID()
        func transaction(
            _ id: String, bought: Int64, revoked: Int64? = nil, signed: Int64, extra: String = ""
        ) throws -> JWSTransaction {
            let revocation = revoked.map { #","revocationDate":\#($0)"# } ?? ""
            return try Self.transaction(
                #"{"transactionId":"\#(id)","productId":"p","purchaseDate":\#(bought),"signedDate":\#(signed)\#(revocation)\#(extra),"price":6000,"currency":"CNY"}"#
            )
        }
        var listed = ListedTransactions()
        listed.add(try transaction("1", bought: start + 10, signed: start + 10))
        // Refunded the same day; then an older form of it read again (from another history) changes nothing.
        listed.add(try transaction("1", bought: start + 10, revoked: start + 500, signed: start + 500))
        listed.add(try transaction("1", bought: start + 10, signed: start + 20))
        listed.add(try transaction("2", bought: start - 1000, revoked: start + 100, signed: start + 100))
        listed.add(try transaction("3", bought: start + 86_400_000, signed: start + 86_400_000))
        listed.add(
            try transaction(
                "4", bought: start + 50, signed: start + 50, extra: #","inAppOwnershipType":"FAMILY_SHARED""#))
        listed.add(
            try transaction(
                "5", bought: start + 5, signed: start + 5,
                extra: #","appAccountToken":"\#(token.uuidString.lowercased())""#))
        let entries = listed.entries(from: day.start(utcOffset: 0), to: day.next.start(utcOffset: 0))
        #expect(
            entries.map { "\($0.line):\($0.kind.rawValue):\($0.providerTransactionID)" } == [
                "1:payment:5", "2:payment:1", "3:refund:2", "4:refund:1",
            ])
        #expect(entries[0].orderNo == token.uuidString.lowercased() && entries[1].orderNo == "")
        #expect(entries.allSatisfy { $0.amount == Money(amountMinor: 600, currency: .cny) && $0.feeMinor == 0 })
    }
}
