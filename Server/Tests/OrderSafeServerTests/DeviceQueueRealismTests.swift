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

    @Test(
        "a subscription's transactions name the subscription group its catalog entry gives, as App Store Connect's do; the phone's status and the server's subscriptions follow it"
    )
    func catalogSubscriptionGroup() async throws {
        // The example catalog with its subscriptions in another group than the sandbox's default one.
        var catalog =
            try JSONSerialization.jsonObject(
                with: try CatalogLoader.bundledResource("catalog.example", ext: "json")) as! [String: Any]
        catalog["products"] = (catalog["products"] as! [[String: Any]]).map { product in
            var product = product
            if product["subscription_group"] != nil { product["subscription_group"] = "20740001" }
            return product
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-group-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: catalog).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await TestServer.withComponents(extra: ["ORDERSAFE_CATALOG_FILE": file.path]) { client, components, _ in
            let devices = components.sandbox!.appStoreDevices
            let alice = try await TestServer.token("alice")
            let order = try await TestServer.createOrder(client, token: alice, product: "vip_monthly").decoded(
                OrderResponse.self
            ).order
            guard
                case .success(let signed) = try await devices.purchase(
                    device: "group-phone", productID: SubscriptionStateTests.monthly, appAccountToken: order.orderUUID,
                    askToBuy: false, confirm: true)
            else { throw CancellationError() }
            #expect(SandboxAppStoreDevices.payload(signed)?["subscriptionGroupIdentifier"] as? String == "20740001")
            #expect(try await devices.subscriptionStatuses(device: "group-phone", groupID: "20740001").count == 1)
            #expect(try await AppStoreFlowTests.submit(client, token: alice, jws: signed).verdict == .recorded)
            let held = try await SubscriptionStateTests.subscriptions(client, token: alice)
            #expect(held.map(\.groupID) == ["20740001"])
        }
    }
}
