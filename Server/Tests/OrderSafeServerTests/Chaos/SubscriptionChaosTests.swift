import Foundation
import LedgerTestSupport
import OrderSafeModel
import Sandbox
import Testing

@testable import OrderSafeServer

/// Subscriptions under chaos: many subscribers, each turning auto-renew off and on, failing to bill (with and
/// without grace), recovering, upgrading, being refunded, while the App Store bills on its accelerated clock; every
/// notification is lost, duplicated or delivered out of order, and the lost ones are found by the history pull. At
/// the end each subscriber's state is what the App Store itself says (its Get All Subscription Statuses codes).
/// `ORDERSAFE_CHAOS_SUBSCRIBERS` makes it larger, `ORDERSAFE_CHAOS_SEED` replays a run.
@Suite("Chaos: subscription signals reordered, duplicated and lost converge to the App Store's state")
struct SubscriptionChaosTests {
    static let subscribers =
        ProcessInfo.processInfo.environment["ORDERSAFE_CHAOS_SUBSCRIBERS"].flatMap(Int.init) ?? 24
    static let rounds = 8
    static let monthly = "com.example.ordersafe.vip.monthly"
    static let plus = "com.example.ordersafe.vip.plus.monthly"

    static func state(apple status: Int) -> SubscriptionState? {
        switch status {
        case 1: .active
        case 2: .expired
        case 3: .inBillingRetry
        case 4: .inGracePeriod
        case 5: .revoked
        default: nil
        }
    }

    @Test("every subscriber's state matches the App Store's, on each engine", arguments: TestEngine.available)
    func converges(engine: TestEngine) async throws {
        let seed = ChaosTests.seed
        try await SubscriptionQuarterTests.withAcceleratedStore(engine: engine) { client, components, clock in
            let store = components.sandbox!.appStore
            var random = SeededRandom(state: seed)
            var chains: [(user: String, token: String, original: String)] = []
            var pending: [String] = []
            var lost = 0
            var duplicated = 0
            for index in 0..<Self.subscribers {
                let user = "subscriber\(index)"
                let token = try await TestServer.token(user, lifetime: 86400)
                let (original, first) = try await store.purchase(
                    productID: Self.monthly, type: "Auto-Renewable Subscription")
                #expect(try await AppStoreFlowTests.submit(client, token: token, jws: first).verdict == .recorded)
                pending.append(try #require(await store.latestNotification))
                chains.append((user, token, original))
            }
            _ = try await components.runner.runDue()  // the first history pull, at start
            // Apple signs no two versions of a transaction in the same millisecond (a refund is signed when it is
            // granted, after the purchase): the rounds start a second after the purchases.
            clock.advance(by: 1)
            for _ in 0..<Self.rounds {
                for chain in chains {
                    // What the subscriber or the store does this round; a step the store refuses now (nothing
                    // to recover, a refunded chain) is simply not taken.
                    let made: String?
                    switch random.next() % 10 {
                    case 0: made = try? await store.subscription(chain.original, .autoRenew(false))
                    case 1: made = try? await store.subscription(chain.original, .autoRenew(true))
                    case 2:
                        try? await store.failNextBilling(chain.original, graceDays: random.chance(50) ? 6 : 0)
                        made = nil
                    case 3: made = try? await store.recoverBilling(chain.original)
                    case 4 where random.chance(30): made = try? await store.upgrade(chain.original, to: Self.plus)
                    case 5 where random.chance(20):
                        if let latest = try await store.latestTransaction(of: chain.original),
                            (try? await store.refund(transactionID: latest)) != nil
                        {
                            made = await store.latestNotification
                        } else {
                            made = nil
                        }
                    default: made = nil
                    }
                    if let made { pending.append(made) }
                    clock.advance(by: 1)
                }
                clock.advance(by: TimeInterval(60 + random.next() % 300))
                pending += try await store.renewDue()
                // Delivered in any order; some twice; some never (the history has them).
                pending.shuffle(using: &random)
                for payload in pending {
                    if random.chance(20) {
                        lost += 1
                        continue
                    }
                    #expect(try await AppStoreFlowTests.notify(client, payload) == .ok)
                    if random.chance(10) {
                        duplicated += 1
                        #expect(try await AppStoreFlowTests.notify(client, payload) == .ok)
                    }
                }
                pending = []
            }
            // The history pull finds what was lost (run now rather than on its hourly schedule, so the states the
            // clock has not moved past yet, grace periods and billing retries, are compared too).
            _ = try await components.appStore!.pullNotificationHistory(
                from: TestServer.now.addingTimeInterval(-86400), to: clock.now())
            var states: [SubscriptionState: Int] = [:]
            for chain in chains {
                let apple = try #require(Self.state(apple: try await store.status(of: chain.original)))
                let ours = try await SubscriptionStateTests.subscriptions(client, token: chain.token).first
                #expect(
                    ours?.state == apple,
                    "\(chain.user) \(chain.original): ours \(String(describing: ours)), Apple's \(apple)")
                states[apple, default: 0] += 1
            }
            print(
                "subscription chaos[\(engine.rawValue), seed \(seed)]: \(chains.count) subscribers, \(Self.rounds) rounds, \(lost) notifications lost, \(duplicated) duplicated; the App Store's states: \(states.map { "\($0.key.rawValue) \($0.value)" }.sorted())"
            )
        }
    }
}
