import Foundation
@_spi(OrderSafeServer) import OrderSafeModel

/// Signs new sandbox App Store transactions in bulk, on every core and off the sandbox's actor, for load tests: each
/// is signed by the sandbox's authority exactly as its purchases are (so a server trusting the sandbox verifies them),
/// but the sandbox keeps no record of them, so minting a million leaves the server under test unchanged.
public struct SandboxTransactionMinter: Sendable {
    let authority: SandboxAppStoreCA
    let bundleID: String

    /// How many transactions one call may mint.
    public static let maxCount = 1_000_000

    public init(authority: SandboxAppStoreCA, bundleID: String) {
        self.authority = authority
        self.bundleID = bundleID
    }

    /// `count` consumable purchases of `productID` — or, with `subscription`, first purchases of an auto-renewable
    /// subscription, each a chain of its own, for 30 days — numbered from a transaction id no sandbox purchase uses
    /// (ids start at 3×10¹⁸ plus the clock's milliseconds times a million, so runs a millisecond apart never collide).
    /// With `accountTokens` (at least `count`), the i-th transaction carries the i-th as its `appAccountToken`, as a
    /// purchase StoreKit made for an order does.
    public func mint(
        productID: String, count: Int, subscription: Bool = false, accountTokens: [UUID]? = nil, at date: Date
    ) async throws -> [String] {
        guard (0...Self.maxCount).contains(count) else {
            throw SandboxAppStoreError.tooMany(count, limit: Self.maxCount)
        }
        if let accountTokens, accountTokens.count < count {
            throw SandboxAppStoreError.tooFewAccountTokens(accountTokens.count, count: count)
        }
        let now = date.millisecondsSince1970
        let first = 3_000_000_000_000_000_000 + (now % 1_000_000_000_000) * 1_000_000
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let chunk = (count + workers - 1) / max(1, workers)
        return try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
            for worker in 0..<workers where worker * chunk < count {
                let range = (worker * chunk)..<min(count, (worker + 1) * chunk)
                group.addTask { [authority, bundleID] in
                    let signed = try range.map { index in
                        var payload = SandboxAppStore.transactionPayload(
                            id: String(first + Int64(index)), originalTransactionID: nil, bundleID: bundleID,
                            productID: productID, type: subscription ? SandboxAppStore.autoRenewable : "Consumable",
                            at: now, familyShared: false)
                        if let token = accountTokens?[index] {
                            payload["appAccountToken"] = token.uuidString.lowercased()
                        }
                        if subscription {
                            payload["expiresDate"] = now + 30 * 86_400_000
                            payload["subscriptionGroupIdentifier"] = SandboxAppStore.subscriptionGroup
                        }
                        return try authority.sign(payload: payload)
                    }
                    return (worker, signed)
                }
            }
            var parts: [Int: [String]] = [:]
            for try await (worker, signed) in group { parts[worker] = signed }
            return parts.sorted { $0.key < $1.key }.flatMap(\.value)
        }
    }

    /// The account tokens of `text`: a UUID a line, blank lines and the blanks around each skipped (a file written on
    /// any system: `\r\n` too), in order.
    public static func accountTokens(in text: String) throws(SandboxAppStoreError) -> [UUID] {
        var tokens: [UUID] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { continue }
            guard let uuid = UUID(uuidString: trimmed) else { throw .badAccountToken(line: number + 1) }
            tokens.append(uuid)
        }
        return tokens
    }
}
