import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeServer
@testable import Sandbox

/// The sandbox App Store's device queue is no kinder than an iPhone: what StoreKit hands an app there is what a
/// device would.
@Suite("The sandbox phone behaves as an iPhone does")
struct DeviceQueueRealismTests {
    @Test(
        "current entitlements as StoreKit's: a non-consumable, and of a subscription only its latest transaction while it has not expired; never a consumable"
    )
    func currentEntitlementsAsStoreKit() async throws {
        try await TestServer.withComponents { _, components, clock in
            let devices = components.sandbox!.appStoreDevices
            func buy(_ product: String) async throws -> String {
                guard
                    case .success(let signed) = try await devices.purchase(
                        device: "realism-phone", productID: product, appAccountToken: UUID(), askToBuy: false,
                        confirm: true)
                else { throw CancellationError() }
                return SandboxAppStoreDevices.transactionID(signed) ?? ""
            }
            func entitled() async -> Set<String> {
                Set(
                    await devices.entitlements(device: "realism-phone").compactMap(SandboxAppStoreDevices.transactionID)
                )
            }
            _ = try await buy("com.example.ordersafe.coins60")
            let noAds = try await buy("com.example.ordersafe.removeads")
            let first = try await buy("com.example.ordersafe.vip.monthly")
            #expect(await entitled() == [noAds, first])
            let renewal = try await devices.deliverFromElsewhere(
                device: "realism-phone", productID: "com.example.ordersafe.vip.monthly",
                .renewal(originalTransactionID: first))
            #expect(await entitled() == [noAds, renewal], "only the subscription's latest transaction")
            clock.advance(by: 70 * 86400)
            #expect(await entitled() == [noAds], "expired: no longer an entitlement")
        }
    }

    @Test("a promoted purchase carries the offer the user tapped with it, handed to the app once")
    func promotedWithItsOffer() async throws {
        try await TestServer.withComponents { _, components, _ in
            let devices = components.sandbox!.appStoreDevices
            try await devices.promote(
                device: "promoting-phone", productID: "com.example.ordersafe.vip.monthly",
                offer: .init(id: "WINBACK_1", kind: .winBack))
            try await devices.promote(device: "promoting-phone", productID: "com.example.ordersafe.coins60")
            let taken = await devices.takePurchaseIntents(device: "promoting-phone")
            #expect(taken.map(\.productID) == ["com.example.ordersafe.vip.monthly", "com.example.ordersafe.coins60"])
            #expect(taken.map(\.offer) == [.init(id: "WINBACK_1", kind: .winBack), nil])
            #expect(await devices.takePurchaseIntents(device: "promoting-phone").isEmpty)
        }
    }
}
