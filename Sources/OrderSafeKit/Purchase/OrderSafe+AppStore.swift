import Foundation
import OrderSafeModel

extension OrderSafe {
    /// The App Store leg: the order's UUID goes with the purchase as its `appAccountToken`, so the transaction names
    /// its order wherever it is delivered (the purchase call, `Transaction.updates`, `Transaction.unfinished`).
    func buyFromAppStore(
        _ entry: JournalEntry, product: CatalogProduct, order: Order, signed: SignedPurchaseOptions,
        confirmIn scene: ConfirmationScene?
    ) async -> PurchaseOutcome {
        var entry = entry
        let outcome = { (state: PurchaseOutcome.State) in
            var outcome = PurchaseOutcome(
                orderNo: order.orderNo, productID: entry.productID, channel: .appStore, state: state, order: order)
            outcome.userID = entry.userID
            return outcome
        }
        hub.send(.purchaseStage(orderNo: order.orderNo, stage: .paying), of: entry.userID)
        let result: StorePurchaseResult
        do {
            result = try await store.purchase(
                productID: product.appStoreProductID ?? product.id, appAccountToken: order.orderUUID, signed: signed,
                confirmIn: scene)
        } catch {
            let failure = (error as? StoreFailure) ?? .other("\(error)")
            if failure.mayHaveCharged {
                // Perhaps charged: never reported as failed, and the order is not given up yet — its transaction may
                // come through the listener. Resumes give up on it only after `storeMayStillDeliver`.
                log(
                    .warning, "the store failed after the purchase sheet; its transaction may still come",
                    ["order_no": order.orderNo])
                entry.retryAfter = configuration.now().addingTimeInterval(
                    configuration.confirmation.storeMayStillDeliver)
                try? await save(&entry)
                var waiting = outcome(.awaitingConfirmation)
                waiting.storeMayHaveCharged = true
                return report(waiting, of: entry.userID)
            }
            // The store refused before charging: the order will never be paid.
            if let settled = await giveUp(entry).settled, settled.state == .fulfilled {
                return report(settled, of: entry.userID)
            }
            return report(
                outcome(failure == .storeKit(.userCancelled) ? .cancelled : .failed(.store(failure))), of: entry.userID)
        }
        switch result {
        case .success(let transaction):
            // Nil only if the server records it for another account: another user signed in while it was bought. The
            // store charged, so it is never "failed"; and none of it is shown to the one signed in now.
            if let recorded = await process(transaction) { return recorded }
            var charged = outcome(.awaitingConfirmation)
            charged.storeMayHaveCharged = true
            return charged
        case .pending:
            entry.stage = .pendingApproval
            try? await save(&entry)
            hub.send(.purchaseStage(orderNo: order.orderNo, stage: .awaitingApproval), of: entry.userID)
            return report(outcome(.pending), of: entry.userID)
        case .userCancelled:
            // StoreKit on iOS 18 has answered `userCancelled` for purchases it charged (RevenueCat purchases-ios
            // #4903): a transaction carrying this order's token means it was paid after all.
            if let paid = await store.unfinished().first(where: { $0.appAccountToken == order.orderUUID }) {
                if let recorded = await process(paid) { return recorded }
                var charged = outcome(.awaitingConfirmation)
                charged.storeMayHaveCharged = true
                return charged
            }
            // The buyer is told what StoreKit said; the order is kept for the store's delivery window, so a
            // transaction that still comes is recorded for it and reported then. After the window it is closed.
            entry.buyerCancelled = true
            entry.retryAfter = configuration.now().addingTimeInterval(configuration.confirmation.storeMayStillDeliver)
            try? await save(&entry)
            return report(outcome(.cancelled), of: entry.userID)
        }
    }

    /// Records one transaction with the server and finishes it only when the server answered `recorded` for that
    /// very transaction. A caller that meets a transaction already being recorded waits for that recording and gets
    /// its outcome. Nil: the transaction was another account's (recorded for its owner and finished), nothing of it
    /// is this user's to see.
    func process(_ transaction: StoreTransaction) async -> PurchaseOutcome? {
        if let running = recordings[transaction.id] { return await running.value }
        // Not a child task: a recording once started is seen through even if its caller is cancelled.
        let recording = Task { await self.record(transaction) }
        recordings[transaction.id] = recording
        let outcome = await recording.value
        recordings[transaction.id] = nil
        return outcome
    }

    private func record(_ transaction: StoreTransaction) async -> PurchaseOutcome? {
        var entry = await journalEntry(for: transaction)
        // Recorded already, and left unfinished because this device could not verify it: nothing more to do or say.
        if entry?.stage == .recorded { return nil }
        if heldForRequester(transaction, entry) {
            log(.info, "approved purchase waits for the user who asked", ["transaction_id": String(transaction.id)])
            return nil
        }
        // Another user's purchase is carried through for its owner; none of its outcomes is shown to this one. Whose
        // it is, and who is signed in, are asked as each outcome is told: users may change while it is recorded.
        let owner = entry?.userID
        let report = { (outcome: PurchaseOutcome) in
            owner == nil || owner == self.userID ? self.report(outcome, of: owner) : nil
        }
        let orderNo = entry?.orderNo
        let productID = entry?.productID ?? transaction.productID
        let held = PurchaseOutcome(orderNo: orderNo, productID: productID, channel: .appStore, state: .underReview)
        if entry?.stage == .submitting, let retryAfter = entry?.retryAfter, configuration.now() < retryAfter {
            return report(held)  // answered not-recorded lately: asked again once its wait is over
        }
        var current = entry ?? JournalEntry(transaction: transaction, at: configuration.now())
        if current.stage != .submitting { current.retryAfter = nil }  // a wait of an earlier stage
        current.stage = .submitting
        current.transactionID = transaction.id
        current.signedTransaction = transaction.jwsRepresentation
        if entry != nil {
            try? await save(&current)
            entry = current
        }
        if let orderNo { hub.send(.purchaseStage(orderNo: orderNo, stage: .recording), of: owner) }
        var waiting = PurchaseOutcome(
            orderNo: orderNo, productID: productID, channel: .appStore, state: .awaitingConfirmation)
        waiting.storeMayHaveCharged = true  // the store charged: it gave this transaction
        let response: AppStoreSubmissionResponse
        do {
            response = try await api.submit(signedTransaction: transaction.jwsRepresentation)
        } catch let problem as ServerProblem {
            // No verdict: the transaction stays unfinished (StoreKit delivers it again) and the entry stays.
            log(
                .warning, "transaction not recorded yet",
                ["transaction_id": String(transaction.id), "reason": problem.description])
            if problem.isHeld { return report(await keepUnfinished(current, held)) }
            // The store charged: no answer of the server's ends the purchase. A refusal (401 an expired app token,
            // 403, 409 a product or binding it does not know yet, a token of another user) keeps the transaction
            // unfinished and its entry waiting, longer after each answer, to be submitted again; the buyer hears
            // that the payment is being confirmed.
            guard problem.isRetryable else { return report(await keepUnfinished(current, waiting)) }
            if entry != nil {
                current.attempts += 1
                try? await save(&current)
            }
            return report(waiting)
        } catch {
            return report(waiting)
        }
        // The rule: only `recorded` for this very transaction id finishes it. A verdict for another id, none at all,
        // or `rejected` leaves it unfinished: StoreKit delivers it again, and it is submitted again after a wait.
        guard let verdict = response.transactions.first(where: { $0.transactionID == String(transaction.id) }) else {
            log(
                .warning, "the server's answer names no verdict for this transaction",
                ["transaction_id": String(transaction.id)])
            return report(waiting)
        }
        guard verdict.verdict == .recorded else {
            log(
                .warning, "transaction not recorded",
                ["transaction_id": String(transaction.id), "code": verdict.error?.code ?? "-"])
            return report(await keepUnfinished(current, held))
        }
        if transaction.isVerified {
            if await store.finish(transaction) {
                hub.send(
                    .transactionFinished(transactionID: transaction.id, orderNo: verdict.order?.orderNo ?? orderNo))
            } else {
                // Finished already (another launch of the app, a sweep): said so, not assumed to be this one's doing.
                log(
                    .warning, "recorded; the store holds no unfinished transaction of this id to finish",
                    ["transaction_id": String(transaction.id)])
            }
        } else {
            // The server verified it against Apple's roots and recorded it, so the order's state below is the truth;
            // but a transaction StoreKit could not verify on this device is never finished (Apple's sample code and
            // RevenueCat leave it: research §3.1). Its entry remembers that it was recorded, so its deliveries at
            // every launch are neither submitted nor reported again.
            log(
                .warning, "transaction recorded, left unfinished: StoreKit could not verify it on this device",
                [
                    "transaction_id": String(transaction.id), "reason": transaction.verificationFailure ?? "-",
                ])
            current.stage = .recorded
            current.signedTransaction = nil
            try? await save(&current)
        }
        // Whose it is: the user who bought it here, else whoever is signed in now.
        var told: PurchaseOutcome?
        if let order = verdict.order, order.userID == owner ?? userID {
            if order.userID == userID { await refreshEntitlements() }
            told = self.report(
                PurchaseOutcome.settled(order)
                    ?? PurchaseOutcome(
                        orderNo: order.orderNo, productID: order.productID, channel: .appStore, state: .fulfilled,
                        order: order), of: order.userID)
        } else {
            // Recorded for another account (the device changed hands): finished here, credited to its owner, not shown.
            log(
                .info, "transaction of another account recorded for its owner",
                ["transaction_id": String(transaction.id)])
        }
        // The entry leaves only once its buyer was told (a kill before that tells them at the next launch); while
        // another user is signed in it stays, so the buyer's next launch hears what it became.
        if transaction.isVerified, entry != nil {
            if let owner, owner != userID {
                current.stage = .recordedForOwner
                try? await save(&current)
            } else {
                await journal.remove(current.id)
            }
        }
        return told
    }

    /// A transaction the server did not record: it stays unfinished, and its entry (made now if it had none) waits
    /// longer after each answer (``JournalEntry/retryDelay(attempts:)``) before it is submitted again.
    private func keepUnfinished(_ entry: JournalEntry, _ outcome: PurchaseOutcome) async -> PurchaseOutcome {
        var entry = entry
        entry.attempts += 1
        entry.retryAfter = configuration.now().addingTimeInterval(
            JournalEntry.retryDelay(
                attempts: entry.attempts, cap: configuration.confirmation.notRecordedRetryCap))
        try? await save(&entry)
        return outcome
    }

    /// The journal entry of a transaction: the one whose order UUID it carries, or which already holds it.
    func journalEntry(for transaction: StoreTransaction) async -> JournalEntry? {
        let entries = await journal.entries().entries
        if let entry = entries.first(where: { entry in
            entry.channel == .appStore
                && ((transaction.appAccountToken != nil && entry.orderUUID == transaction.appAccountToken)
                    || entry.transactionID == transaction.id)
        }) {
            return entry
        }
        // An Ask to Buy approved without the order's token: the signed-in user's oldest request for that product is
        // the one approved. The server adopts the transaction into an order of its own for the user; this entry ends
        // with it, so it is never told "cancelled" when its request lapses (its own order stays unpaid). With no
        // request of the signed-in user's, another user's of this device (``heldForRequester(_:_:)``). A request
        // made after the approval (by the transaction's purchase date) is not the one approved.
        guard transaction.appAccountToken == nil,
            let product = try? await loadCatalog().products.first(where: {
                $0.appStoreProductID == transaction.productID
            })
        else { return nil }
        let approved = transaction.purchaseDate ?? .distantFuture
        let requests = entries.filter {
            $0.channel == .appStore && $0.stage == .pendingApproval && $0.productID == product.id
                && $0.createdAt <= approved
        }.sorted { $0.createdAt < $1.createdAt }
        return requests.first { $0.userID == userID } ?? requests.first
    }

    /// An Ask to Buy approved without the order's token whose request was another user's of this device: the
    /// server adopts a tokenless transaction for whoever submits it, so only its requester's submission credits the
    /// right user. It waits, unfinished and unsubmitted, for their sign-in (or for the request to lapse).
    func heldForRequester(_ transaction: StoreTransaction, _ entry: JournalEntry?) -> Bool {
        guard transaction.appAccountToken == nil, let entry, entry.stage == .pendingApproval else { return false }
        return entry.userID != userID
    }

    /// A purchase that will not be paid through this entry: the order is cancelled on the server (which first asks
    /// the provider, so a paid order is never cancelled) and the entry removed once the server's answer is final —
    /// or, `watching`, kept as ``JournalEntry/Stage/closedWatching`` when the order was closed unpaid.
    @discardableResult
    func giveUp(_ entry: JournalEntry, watching: Bool = false) async -> GiveUp {
        guard let orderNo = entry.orderNo else {
            await journal.remove(entry.id)
            return .notOrdered
        }
        do {
            _ = try await api.cancel(orderNo)
        } catch let problem as ServerProblem where problem.isRetryable {
            return .unknown  // asked again at the next resume
        } catch let problem as ServerProblem where problem.isNotFound {
            return await forget(entry)
        } catch {
            // 409: no longer cancellable (paid, or closed meanwhile): the order's own status says which.
        }
        let order: Order
        do {
            order = try await api.order(orderNo)
        } catch let problem as ServerProblem where problem.isNotFound {
            return await forget(entry)
        } catch {
            return .unknown
        }
        guard order.status.isFinal else { return .unknown }
        guard let settled = PurchaseOutcome.settled(order), settled.state != .cancelled else {
            if watching {
                var watched = entry
                watched.stage = .closedWatching
                watched.retryAfter = nil
                try? await save(&watched)
            } else {
                await journal.remove(entry.id)
            }
            return .cancelled(order)
        }
        await journal.remove(entry.id)
        return .settled(settled)
    }

    /// An entry whose order the server does not show the signed-in user: another user signed in since it was made
    /// (the server answers 404 for another user's order), or it is gone. Nothing of it can settle here, and nothing
    /// of it is this user's to see: the entry goes without an outcome. What was paid stays its owner's (a StoreKit
    /// transaction carries its order's UUID, a provider's payment its order number), and the owner sees the order's
    /// true state from the server when they sign in again.
    private func forget(_ entry: JournalEntry) async -> GiveUp {
        log(
            .info, "journal entry of an order the signed-in user cannot see, dropped",
            ["order_no": entry.orderNo ?? "-"])
        await journal.remove(entry.id)
        return .notTheSignedInUsers
    }
}

/// What giving up on a journal entry found.
enum GiveUp: Sendable {
    /// The entry had no order yet: nothing to cancel; the entry is gone.
    case notOrdered
    /// The order is cancelled or closed, so nothing was paid; the entry is gone.
    case cancelled(Order)
    /// The order turned out settled otherwise (paid after all, refunded, under review); the entry is gone.
    case settled(PurchaseOutcome)
    /// The server could not say yet: the entry stays for the next resume.
    case unknown
    /// The order is not the signed-in user's: the entry is gone, and no outcome is reported to this user.
    case notTheSignedInUsers

    /// The outcome when the order turned out paid or otherwise settled (not cancelled).
    var settled: PurchaseOutcome? {
        if case .settled(let outcome) = self { outcome } else { nil }
    }
}
