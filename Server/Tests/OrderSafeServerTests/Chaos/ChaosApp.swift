import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import NIOCore
import OrderSafeModel
import Sandbox
import Testing

@testable import OrderSafeServer

/// The apps and providers of a chaos run, talking to random replicas through a faulty network.
struct ChaosApp: Sendable {
    let clients: [any TestClientProtocol]
    let tokens: [String]
    let shared: ChaosRun.Shared
    let sandbox: SandboxProviders

    enum Failure: Error {
        case gaveUp(String)
    }

    // MARK: The network

    /// One app request through a random replica: it may never arrive (the server restarted before it), or arrive
    /// and be processed with its answer lost (a restart or a database error after the commit). The app retries
    /// until it has an answer it can act on.
    func request(_ uri: String, token: String, body: String, key: String? = nil, random: inout SeededRandom)
        async throws -> TestResponse
    {
        var headers: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/json"]
        if let key { headers[HTTPField.Name("Idempotency-Key")!] = key }
        var arrived = false
        for _ in 0..<20 {
            let client = clients[Int(random.next() % UInt64(clients.count))]
            if random.chance(8) {
                shared.tally.step(faulted: true)
                continue
            }
            let response = try await client.execute(
                uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
            let lost = random.chance(8)
            shared.tally.step(faulted: lost, redelivery: arrived)
            arrived = true
            if lost || response.status.code >= 500 { continue }
            return response
        }
        throw Failure.gaveUp(uri)
    }

    /// A provider's notification through a random replica: the server may be down, or take it and lose its answer
    /// (the provider then sends it again). Returns whether the provider saw it acknowledged.
    func deliver(uri: String, headers: HTTPFields, body: [UInt8], accepted: (TestResponse) -> Bool) async -> Bool {
        let client = clients[shared.pick(clients.count)]
        if shared.roll(8) {
            shared.tally.step(faulted: true)
            return false
        }
        guard
            let response = try? await client.execute(
                uri: uri, method: .post, headers: headers, body: ByteBuffer(bytes: body))
        else {
            shared.tally.step(faulted: true)
            return false
        }
        let lost = shared.roll(8)
        shared.tally.step(faulted: lost, redelivery: !shared.firstArrival(of: body))
        return !lost && accepted(response)
    }

    // MARK: Purchases

    func purchase(index: Int, seed: UInt64, random: inout SeededRandom) async throws {
        let userIndex = Int(random.next() % UInt64(tokens.count))
        let user = "user\(userIndex)"
        switch random.next() % 3 {
        case 0: try await appStore(index: index, seed: seed, user: user, token: tokens[userIndex], random: &random)
        case 1:
            try await provider(.alipay, index: index, seed: seed, user: user, token: tokens[userIndex], random: &random)
        default:
            try await provider(
                .wechatPay, index: index, seed: seed, user: user, token: tokens[userIndex], random: &random)
        }
    }

    private func createOrder(
        product: String, channel: OrderSafeModel.Channel, index: Int, seed: UInt64, user: String, token: String,
        random: inout SeededRandom
    )
        async throws -> OrderResponse
    {
        let response = try await request(
            "/v1/orders", token: token, body: #"{"product_id":"\#(product)","channel":"\#(channel.rawValue)"}"#,
            key: "chaos-\(seed)-\(index)",
            random: &random)
        #expect(response.status == .created || response.status == .ok, "create: \(String(buffer: response.body))")
        let created = try response.decoded(OrderResponse.self)
        shared.expectations.withLock { $0.orderOwners[created.order.orderNo] = user }
        return created
    }

    private func appStore(index: Int, seed: UInt64, user: String, token: String, random: inout SeededRandom)
        async throws
    {
        shared.tally.update { $0.purchases["appstore", default: 0] += 1 }
        if random.chance(4) { return try await renewalOnly(user: user, token: token, random: &random) }
        let created = try await createOrder(
            product: "coins_60", channel: .appStore, index: index, seed: seed, user: user, token: token, random: &random
        )
        let unbound = random.chance(5)
        let (transactionID, jws) = try await sandbox.appStore.purchase(
            productID: "com.example.ordersafe.coins60", appAccountToken: unbound ? nil : created.order.orderUUID)
        shared.expectations.withLock { $0.transactionOwners[transactionID] = user }

        // Apple may refund it before the server heard of it at all (the user asked right away), or after its
        // notification but before the app submits: either way the refund must win.
        let refundFirst = random.chance(4)
        let refundBeforeNotification = refundFirst && random.chance(50)
        if refundFirst {
            shared.tally.step(faulted: true)
            shared.expectations.withLock { _ = $0.refundedTransactions.insert(transactionID) }
            shared.tally.update { counts in
                if refundBeforeNotification {
                    counts.refundsBeforeNotification += 1
                } else {
                    counts.refundsBeforeSubmission += 1
                }
            }
        }
        let refundNotice =
            refundFirst
            ? try await sandbox.appStore.notification(
                type: "REFUND", signedTransaction: try await sandbox.appStore.refund(transactionID: transactionID))
            : nil
        if let refundNotice, refundBeforeNotification { await notifyAppStoreUntilAcknowledged(refundNotice) }

        // The App Store's notification: dropped, duplicated, held back to arrive last, or delivered.
        let notification = try await sandbox.appStore.notification(type: "ONE_TIME_CHARGE", signedTransaction: jws)
        if random.chance(10) {
            shared.tally.step(faulted: true)
        } else if random.chance(10) {
            shared.tally.step(faulted: true)
            shared.expectations.withLock { $0.heldNotifications.append(notification) }
        } else {
            await notifyAppStore(notification)
            if random.chance(10) {
                shared.tally.step(faulted: true, redelivery: true)
                await notifyAppStore(notification)
            }
        }

        if let refundNotice, !refundBeforeNotification { await notifyAppStoreUntilAcknowledged(refundNotice) }

        if random.chance(15) {
            // The app crashes before it submits: the transaction stays unfinished until the next launch.
            shared.tally.step(faulted: true)
            shared.tally.update { $0.crashedBeforeSubmitting += 1 }
            shared.expectations.withLock { $0.unfinished.append((user, jws, transactionID)) }
            return
        }
        if refundFirst {
            // The app submits what StoreKit gave it before the refund: recorded as paid and refunded (the app finishes
            // it), and nothing stays granted.
            let result = try await submit(jws, token: token, random: &random)
            #expect(result.verdict == .recorded && result.order?.status == .refunded, "refunded first: \(result)")
            return
        }
        if !unbound, random.chance(3) {
            // Another user's device submits it first, or at the same moment as the owner's: recorded for the owner
            // (that device finishes it) without showing the order, and the payment is the owner's all the same.
            let thief = tokens[Int(random.next() % UInt64(tokens.count))]
            if thief != token {
                shared.tally.step(faulted: true, redelivery: true)
                shared.tally.update {
                    $0.foreignSubmissions += 1
                    $0.foreignFirst += 1
                }
                let (thiefSeed, ownSeed, together) = (random.next(), random.next(), random.chance(50))
                async let stolen = submit(jws, token: thief, seed: thiefSeed)
                async let own = together ? submit(jws, token: token, seed: ownSeed) : nil
                let (theirs, ours) = try await (stolen, own)
                #expect(theirs.verdict == .recorded && theirs.order == nil, "\(theirs)")
                if let ours {
                    #expect(ours.verdict == .recorded, "owner beside another user: \(ours)")
                    return
                }
            }
        }
        let result: AppStoreTransactionResult
        if random.chance(5) {
            // Two devices of the same user submit it at once.
            shared.tally.step(faulted: true, redelivery: true)
            async let first = submit(jws, token: token, seed: random.next())
            async let second = submit(jws, token: token, seed: random.next())
            let both = try await [first, second]
            #expect(both.allSatisfy { $0.verdict == .recorded }, "\(both)")
            result = both[0]
        } else {
            result = try await submit(jws, token: token, random: &random)
        }
        #expect(result.verdict == .recorded, "submission: \(result)")
        if random.chance(4) {
            // Another user replays the receipt: recorded for its owner, nothing shown or credited to them.
            let thief = tokens[Int(random.next() % UInt64(tokens.count))]
            guard thief != token else { return }
            shared.tally.step(faulted: true, redelivery: true)
            shared.tally.update { $0.foreignSubmissions += 1 }
            let stolen = try await submit(jws, token: thief, random: &random)
            #expect(stolen.verdict == .recorded && stolen.order == nil, "\(stolen)")
        }
    }

    /// A subscriber whose app never saw the original purchase (installed later, or restored): Apple's notifications
    /// of the original and of a renewal may come before or after the app submits the renewal, or not at all; the
    /// whole chain is the subscriber's.
    private func renewalOnly(user: String, token: String, random: inout SeededRandom) async throws {
        shared.tally.step(faulted: true)
        shared.tally.update { $0.renewalOnlySubscribers += 1 }
        let monthly = "com.example.ordersafe.vip.monthly"
        let (original, first) = try await sandbox.appStore.purchase(
            productID: monthly, type: "Auto-Renewable Subscription")
        let (renewal, renewed) = try await sandbox.appStore.purchase(
            productID: monthly, type: "Auto-Renewable Subscription", originalTransactionID: original)
        shared.expectations.withLock {
            $0.transactionOwners[original] = user
            $0.transactionOwners[renewal] = user
            $0.subscriptionTransactions.formUnion([original, renewal])
        }
        let notices = [
            try await sandbox.appStore.notification(type: "SUBSCRIBED", signedTransaction: first),
            try await sandbox.appStore.notification(type: "DID_RENEW", signedTransaction: renewed),
        ]
        let before = random.chance(50)
        if before { for notice in notices { await notifyAppStoreUntilAcknowledged(notice) } }
        let result = try await submit(renewed, token: token, random: &random)
        #expect(result.verdict == .recorded, "renewal-only submission: \(result)")
        // A notification that never came is found by the history: here Apple delivers it after all.
        if !before { for notice in notices.shuffled(using: &random) { await notifyAppStoreUntilAcknowledged(notice) } }
    }

    func submit(_ jws: String, token: String, random: inout SeededRandom) async throws -> AppStoreTransactionResult {
        let response = try await request(
            "/v1/appstore/transactions", token: token, body: #"{"signed_transaction":"\#(jws)"}"#, random: &random)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try response.decoded(AppStoreSubmissionResponse.self).transactions[0]
    }

    func submit(_ jws: String, token: String, seed: UInt64) async throws -> AppStoreTransactionResult {
        var random = SeededRandom(state: seed)
        return try await submit(jws, token: token, random: &random)
    }

    /// A notification Apple keeps sending until it is acknowledged (Apple retries for days; here at most 50 times).
    func notifyAppStoreUntilAcknowledged(_ signedPayload: String) async {
        let body = Array(#"{"signedPayload":"\#(signedPayload)"}"#.utf8)
        for _ in 0..<50 {
            if await deliver(
                uri: "/v1/notify/appstore", headers: [.contentType: "application/json"], body: body,
                accepted: { $0.status == .ok })
            {
                return
            }
        }
    }

    /// Apple sends a notification, retrying (up to five times) until it is acknowledged with 200.
    func notifyAppStore(_ signedPayload: String) async {
        let body = Array(#"{"signedPayload":"\#(signedPayload)"}"#.utf8)
        for _ in 0..<5 {
            if await deliver(
                uri: "/v1/notify/appstore", headers: [.contentType: "application/json"], body: body,
                accepted: { $0.status == .ok })
            {
                return
            }
        }
    }

    private func provider(
        _ channel: OrderSafeModel.Channel, index: Int, seed: UInt64, user: String, token: String,
        random: inout SeededRandom
    ) async throws {
        shared.tally.update { $0.purchases[channel.rawValue, default: 0] += 1 }
        if random.chance(6) {
            shared.tally.step(faulted: true)
            if channel == .alipay {
                await sandbox.alipay.injectGatewayFault(random.chance(50) ? .serverError : .timeout(.milliseconds(20)))
            } else {
                await sandbox.wechatpay.injectAPIFault(random.chance(50) ? .serverError : .frequencyLimited)
            }
        }
        let created = try await createOrder(
            product: "gift_box", channel: channel, index: index, seed: seed, user: user, token: token, random: &random)
        if random.chance(8) {
            shared.tally.step(faulted: true)
            shared.tally.update { $0.abandoned += 1 }
            shared.expectations.withLock { $0.abandonedOrders.append(created.order.orderNo) }
            return
        }
        if random.chance(25) {
            shared.tally.step(faulted: true)
            switch random.next() % 4 {
            case 0:
                if channel == .alipay {
                    await sandbox.alipay.injectNotificationFault(.drop)
                } else {
                    await sandbox.wechatpay.injectNotificationFault(.drop)
                }
            case 1:
                if channel == .alipay {
                    await sandbox.alipay.injectNotificationFault(.duplicate)
                } else {
                    await sandbox.wechatpay.injectNotificationFault(.duplicate)
                }
            case 2:
                if channel == .alipay {
                    await sandbox.alipay.injectNotificationFault(.reorder)
                } else {
                    await sandbox.wechatpay.injectNotificationFault(.reorder)
                }
            default:
                if channel == .alipay {
                    await sandbox.alipay.injectNotificationFault(.delay(.milliseconds(30)))
                } else {
                    await sandbox.wechatpay.injectNotificationFault(.delay(.milliseconds(30)))
                }
            }
        }
        // The user pays in the provider's app.
        shared.tally.step()
        if let alipay = created.alipay {
            _ = try await sandbox.alipay.open(orderString: alipay.orderString)
        } else {
            _ = try await sandbox.wechatpay.open(try #require(created.wechatpay))
        }
        if random.chance(50) {
            // Back in the app: it reports the SDK's answer (the app may also crash here and say nothing).
            let response = try await request(
                "/v1/orders/\(created.order.orderNo)/client-result", token: token, body: #"{"result":"success"}"#,
                random: &random)
            #expect(response.status == .ok, "client-result: \(String(buffer: response.body))")
        } else {
            shared.tally.step(faulted: true)
        }
    }
}
