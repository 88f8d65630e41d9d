import Foundation
import OrderSafeModel

extension OrderSafe {
    /// A provider's leg (``ProviderPayment``): the provider's app is opened through the app's bridge, its answer is
    /// passed to the server as a hint, and the outcome is whatever the server then says the order is.
    func payThroughProvider(_ entry: JournalEntry, response: OrderResponse) async -> PurchaseOutcome {
        var entry = entry
        let order = response.order
        hub.send(.purchaseStage(orderNo: order.orderNo, stage: .paying), of: entry.userID)
        guard let provider = ProviderPayments.payment(of: entry.channel, configuration),
            let answer = await provider.pay(response, within: configuration.confirmation.providerAnswer)
        else {
            return await abandon(entry, order: order, because: .bridgeMissing(entry.channel))
        }
        entry.providerResult = answer.result
        entry.stage = .awaitingProvider
        try? await save(&entry)
        return report(await confirm(entry, hint: answer.hint), of: entry.userID)
    }

    /// Asks the server until the order is final or the policy's time is up. A cancelled or failed hint ends in a
    /// cancellation request (which the server refuses if the provider says paid: then the paid order is reported);
    /// a failed one is reported as the provider's failure, with its reason, not as the buyer's cancellation. Without
    /// the provider app's word of success (no callback: the buyer came back by the app switcher), the provider's own
    /// "not paid", said twice seconds apart, is told as such (``PurchaseOutcome/State/notPaid``); the entry stays.
    /// Every hint names the entry's channel, so a server that lost the order (restored from an older backup)
    /// rebuilds it from that provider's record instead of answering 404.
    func confirm(_ entry: JournalEntry, hint: ClientResultRequest) async -> PurchaseOutcome {
        var hint = hint
        hint.channel = entry.channel
        guard let orderNo = entry.orderNo else {
            return PurchaseOutcome(orderNo: nil, productID: entry.productID, channel: entry.channel, state: .cancelled)
        }
        hub.send(.purchaseStage(orderNo: orderNo, stage: .confirming), of: entry.userID)
        let waiting = PurchaseOutcome(
            orderNo: orderNo, productID: entry.productID, channel: entry.channel, state: .awaitingConfirmation)
        var last: Order?
        var saidNotPaid = 0
        do {
            let answer = try await api.clientResult(orderNo, result: hint)
            last = answer.order
            if answer.providerAnswer == .notPaid { saidNotPaid += 1 }
        } catch let problem as ServerProblem where !problem.isRetryable {
            return await abandonUnknown(entry, problem: problem)
        } catch {}
        if hint.result == .cancelled || hint.result == .failed {
            if let order = last, let settled = PurchaseOutcome.settled(order) { return await settle(entry, settled) }
            switch await giveUp(entry) {
            case .settled(let settled): return settled
            case .cancelled(let order):
                let state: PurchaseOutcome.State =
                    hint.result == .failed ? .failed(Self.providerFailure(entry)) : .cancelled
                return PurchaseOutcome(
                    orderNo: orderNo, productID: entry.productID, channel: entry.channel, state: state, order: order)
            case .notTheSignedInUsers: return notFound(entry)
            case .notOrdered, .unknown: return waiting
            }
        }
        var sinceHint: TimeInterval = 0
        for delay in configuration.confirmation.delays {
            if let order = last, let settled = PurchaseOutcome.settled(order) { return await settle(entry, settled) }
            do {
                try await configuration.sleep(delay)
            } catch {
                return waiting  // cancelled: the entry stays for the next resume
            }
            sinceHint += delay
            do {
                if sinceHint >= 5 {
                    // Ask the server to query the provider again (it does so at most every 5 seconds per order).
                    sinceHint = 0
                    let answer = try await api.clientResult(
                        orderNo,
                        result: ClientResultRequest(result: .pending, detail: "still waiting", channel: entry.channel))
                    last = answer.order
                    saidNotPaid = answer.providerAnswer == .notPaid ? saidNotPaid + 1 : 0
                    if saidNotPaid >= 2, hint.result != .success, last.flatMap(PurchaseOutcome.settled) == nil {
                        return PurchaseOutcome(
                            orderNo: orderNo, productID: entry.productID, channel: entry.channel, state: .notPaid,
                            order: last)
                    }
                } else {
                    last = try await api.order(orderNo)
                }
            } catch let problem as ServerProblem where !problem.isRetryable {
                return await abandonUnknown(entry, problem: problem)
            } catch {}
        }
        if let order = last, let settled = PurchaseOutcome.settled(order) { return await settle(entry, settled) }
        return waiting
    }

    /// The provider's own failure (Alipay 4000, WeChat Pay −1, −3, −4, −5: not installed, not sent, refused), from the
    /// result kept in the entry.
    static func providerFailure(_ entry: JournalEntry) -> OrderSafeError {
        ProviderPayments.type(of: entry.channel)?.failure(result: entry.providerResult ?? "")
            ?? .bridgeMissing(entry.channel)
    }

    /// A final outcome: the entry is done.
    func settle(_ entry: JournalEntry, _ outcome: PurchaseOutcome) async -> PurchaseOutcome {
        await journal.remove(entry.id)
        if outcome.state == .fulfilled || outcome.state == .refunded { await refreshEntitlements() }
        return outcome
    }

    /// The provider was never opened (no bridge, no invoke parameters): the order is cancelled.
    private func abandon(_ entry: JournalEntry, order: Order, because error: OrderSafeError) async -> PurchaseOutcome {
        await giveUp(entry)
        return report(
            PurchaseOutcome(
                orderNo: order.orderNo, productID: entry.productID, channel: entry.channel, state: .failed(error),
                order: order), of: entry.userID)
    }

    /// The server refuses to talk about the order now (401 an expired token, 403, another user's token): the buyer
    /// may have paid in the provider's app, so it is never "failed": the entry stays, and the order's state is asked
    /// again at the next resume (the provider's notification reaches the server meanwhile). A 404 (another user
    /// signed in since, or the order was purged) drops the entry, which can never settle here.
    private func abandonUnknown(_ entry: JournalEntry, problem: ServerProblem) async -> PurchaseOutcome {
        if problem.isNotFound { await journal.remove(entry.id) }
        log(.warning, "the server would not say how the order stands", ["reason": problem.description])
        return PurchaseOutcome(
            orderNo: entry.orderNo, productID: entry.productID, channel: entry.channel, state: .awaitingConfirmation)
    }

    /// The outcome of an entry the signed-in user cannot see (``GiveUp/notTheSignedInUsers``), for a caller that must
    /// return one; ``resume()`` reports none.
    private func notFound(_ entry: JournalEntry) -> PurchaseOutcome {
        PurchaseOutcome(
            orderNo: entry.orderNo, productID: entry.productID, channel: entry.channel,
            state: .failed(
                .server(.refused(status: 404, code: "not_found", message: "the order is not the signed-in user's"))))
    }

}
