import Foundation
import OrderSafeModel

extension OrderSafe {
    /// Completes everything that was on its way: first the store's unfinished transactions (recorded, then
    /// finished), then every journal entry from where it stopped. Runs at ``start()`` and ``logIn(_:)``; call it
    /// again when the app comes to the foreground. Returns the outcomes reached (final or still waiting), one per
    /// purchase of the signed-in user; what another user left is carried through for its owner and not shown.
    /// Signed out, nothing can be asked: nothing is done.
    @discardableResult
    public func resume() async -> [PurchaseOutcome] {
        guard userID != nil else { return [] }
        var outcomes: [PurchaseOutcome] = []
        let (_, problems) = await journal.entries()
        for problem in problems {
            log(.error, "journal file unreadable, set aside", ["file": problem.file, "reason": problem.reason])
            hub.send(.journalProblem(file: problem.file, reason: problem.reason))
        }
        let unfinished = await store.unfinished()
        for transaction in unfinished {
            if let outcome = await process(transaction), outcome.userID == nil || outcome.userID == userID {
                outcomes.append(outcome)
            }
        }
        let stillUnfinished = Set(unfinished.map(\.id))
        for entry in await journal.entries().entries where entriesInFlight.insert(entry.id).inserted {
            defer { entriesInFlight.remove(entry.id) }
            let outcome = await resume(entry, unfinished: stillUnfinished)
            // Whose it is, asked now: another user may have signed in while it was resumed.
            if let outcome, entry.userID == nil || entry.userID == userID {
                outcomes.append(report(outcome, of: entry.userID))
            }
        }
        return outcomes
    }

    /// One entry, from its stage; `unfinished` holds the ids of the store's unfinished transactions.
    private func resume(_ entry: JournalEntry, unfinished: Set<UInt64>) async -> PurchaseOutcome? {
        var entry = entry
        let waiting = PurchaseOutcome(
            orderNo: entry.orderNo, productID: entry.productID, channel: entry.channel, state: .awaitingConfirmation)
        switch entry.stage {
        case .intent:
            // Killed before the order's creation was answered: find the order again (same Idempotency-Key) and
            // cancel it, since nothing was asked to pay for it.
            do {
                _ = try await createOrder(&entry)
            } catch {
                if !error.isRetryable { await journal.remove(entry.id) }
                return error.isRetryable ? waiting : nil
            }
            return outcome(of: await giveUp(entry), entry)
        case .ordered where entry.channel == .appStore:
            // The store was asked to pay; its transaction, if any, was among the unfinished ones just recorded, or
            // comes later through the listener (then bound to the order by its UUID even if it was cancelled here).
            // After a store error that may have followed the charge, the order is kept for the store's delivery
            // window first. So it is after a kill while StoreKit had the purchase (the sheet up, or its answer not yet
            // written down: Ask to Buy's `.pending` among them), when what the store did is unknown; but only for the
            // buyer: another user's launch cannot see the order and leaves it to its owner.
            if entry.retryAfter == nil, entry.userID == userID {
                entry.retryAfter = configuration.now().addingTimeInterval(
                    configuration.confirmation.storeMayStillDeliver)
                try? await save(&entry)
            }
            if let retryAfter = entry.retryAfter, configuration.now() < retryAfter {
                // Told "cancelled" already: nothing to report until a transaction comes (or never).
                if entry.buyerCancelled == true { return nil }
                var still = waiting
                still.storeMayHaveCharged = true
                return still
            }
            // Closed, but unless StoreKit answered (the buyer cancelled), watched: a kill may have lost Ask to Buy's
            // `.pending`, and a parent's approval that still comes must reach its buyer.
            let given = await giveUp(entry, watching: entry.buyerCancelled != true)
            if entry.buyerCancelled == true, case .cancelled = given { return nil }
            return outcome(of: given, entry)
        case .ordered, .awaitingProvider:
            // Killed while the provider's app was open, or before its answer reached the server: ask the server,
            // which asks the provider.
            let hint: ClientResultRequest.Result =
                entry.providerResult.map { Self.hint(providerResult: $0, channel: entry.channel) } ?? .pending
            let outcome = await confirm(
                entry, hint: ClientResultRequest(result: hint, detail: "resumed after relaunch"))
            if case .failed(.server(let problem)) = outcome.state, problem.isNotFound { return nil }
            if outcome.state == .awaitingConfirmation || outcome.state == .notPaid,
                entry.stage == .ordered || hint == .pending
            {
                // The provider never confirmed a payment within the wait: close the order (refused if it was paid).
                return self.outcome(of: await giveUp(entry), entry)
            }
            return outcome
        case .pendingApproval:
            // StoreKit never tells the app that a parent declined, and a request nobody answers lapses within a day
            // (Apple's Ask to Buy: "it will become unavailable within 24 hours"; support.apple.com/HT201089, and the
            // macspro.com guide quoting it). After three days nothing can come of it: the order is given up (a
            // transaction that still comes is adopted by the server for its buyer), and the entry leaves the journal
            // instead of filling it.
            if configuration.now().timeIntervalSince(entry.updatedAt) > Self.askToBuyLapse {
                return outcome(of: await giveUp(entry), entry)
            }
            // The server closed the order meanwhile (an operator, the buyer on another device): the entry is done.
            if let orderNo = entry.orderNo, let order = try? await api.order(orderNo),
                let settled = PurchaseOutcome.settled(order)
            {
                await journal.remove(entry.id)
                return settled
            }
            return PurchaseOutcome(
                orderNo: entry.orderNo, productID: entry.productID, channel: entry.channel, state: .pending)
        case .recorded:
            // Recorded and left unfinished (unverified on this device): the entry goes once the store stops listing it.
            if let id = entry.transactionID, unfinished.contains(id) { return nil }
            await journal.remove(entry.id)
            return nil
        case .closedWatching:
            // Its buyer was told "cancelled"; a transaction that comes for it is recorded and told when it comes.
            if configuration.now() > entry.updatedAt.addingTimeInterval(Self.askToBuyLapse) {
                await journal.remove(entry.id)
            }
            return nil
        case .recordedForOwner:
            // Only its buyer can be told (the server shows the order to its owner alone).
            guard entry.userID == userID else {
                if configuration.now().timeIntervalSince(entry.updatedAt) > Self.ownerNoticeLapse {
                    await journal.remove(entry.id)
                }
                return nil
            }
            fallthrough
        case .submitting:
            // The transaction was not among the unfinished ones (it was finished before the entry was removed, or
            // the server was unreachable just now): its signed form is submitted again for the verdict (the server
            // records a transaction once; finishing a finished transaction does nothing).
            guard let signed = entry.signedTransaction, let id = entry.transactionID else {
                await journal.remove(entry.id)
                return nil
            }
            let transaction = StoreTransaction(
                id: id, originalID: id, productID: entry.productID, appAccountToken: entry.orderUUID,
                jwsRepresentation: signed)
            return await process(transaction)
        }
    }

    /// What an entry given up on reports: its order's state as the server has it, still waiting while the server
    /// could not say, and nothing at all for an order the signed-in user cannot see.
    private func outcome(of giveUp: GiveUp, _ entry: JournalEntry) -> PurchaseOutcome? {
        switch giveUp {
        case .settled(let outcome):
            outcome
        case .cancelled(let order):
            PurchaseOutcome(
                orderNo: order.orderNo, productID: entry.productID, channel: entry.channel, state: .cancelled,
                order: order)
        case .unknown:
            PurchaseOutcome(
                orderNo: entry.orderNo, productID: entry.productID, channel: entry.channel, state: .awaitingConfirmation
            )
        case .notOrdered, .notTheSignedInUsers:
            nil
        }
    }

    /// How long an Ask to Buy request is waited for before its order is given up.
    static let askToBuyLapse: TimeInterval = 3 * 86400

    /// How long a purchase recorded while another user was signed in waits for its buyer's launch to be told.
    static let ownerNoticeLapse: TimeInterval = 30 * 86400

    static func hint(providerResult: String, channel: Channel) -> ClientResultRequest.Result {
        ProviderPayments.type(of: channel)?.hint(result: providerResult) ?? .pending
    }
}
