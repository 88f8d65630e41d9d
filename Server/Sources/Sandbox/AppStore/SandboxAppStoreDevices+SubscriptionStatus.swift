import Foundation

extension SandboxAppStoreDevices {
    /// One subscription's status as a device's StoreKit gives it (`Product.SubscriptionInfo.Status`): Apple's status
    /// code (1 active, 2 expired, 3 in billing retry, 4 in billing grace period, 5 revoked), the chain's latest
    /// transaction and its renewal information, both signed.
    public struct SubscriptionStatus: Sendable, Hashable {
        public var status: Int
        public var signedTransaction: String
        public var signedRenewalInfo: String
    }

    /// `Product.SubscriptionInfo.status(for: groupID)` on `device`: each subscription of the group its Apple ID has
    /// (the chains of the transactions its devices were handed), as the App Store knows it now.
    public func subscriptionStatuses(device: String, groupID: String) async throws -> [SubscriptionStatus] {
        guard Self.isDeviceID(device) else { throw SandboxDeviceError.badDevice }
        var chains: Set<String> = []
        for member in sharingAppleID(with: device) {
            for (type, signed) in devices[member]?.all.values.map({ $0 }) ?? []
            where type == SandboxAppStore.autoRenewable {
                guard let payload = Self.payload(signed), payload["subscriptionGroupIdentifier"] as? String == groupID,
                    let original = payload["originalTransactionId"] as? String
                else { continue }
                chains.insert(original)
            }
        }
        var statuses: [SubscriptionStatus] = []
        for original in chains.sorted() {
            // A chain the store keeps no period of (a transaction delivered to the device that no purchase of the
            // store's began) has no status to give: StoreKit lists only the subscriptions it knows.
            guard let latest = try? await store.latestSignedTransaction(of: original),
                let status = try? await store.status(of: original),
                let renewal = try? await store.currentRenewalInfo(of: original)
            else { continue }
            statuses.append(SubscriptionStatus(status: status, signedTransaction: latest, signedRenewalInfo: renewal))
        }
        return statuses
    }
}
