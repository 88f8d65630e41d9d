import Foundation
import OrderSafeModel

extension OrderSafe {
    /// The App Store leg: the order's UUID goes with the purchase as its `appAccountToken`, so the transaction names
    /// its order wherever it is delivered (the purchase call, `Transaction.updates`, `Transaction.unfinished`).
    func buyFromAppStore(_ entry: JournalEntry, product: OrderSafeModel.Product, order: Order) async -> PurchaseOutcome {
        var entry = entry
        let outcome = { (state: PurchaseOutcome.State) in
            PurchaseOutcome(orderNo: order.orderNo, productID: entry.productID, channel: .appStore, state: state, order: order)
        }
        hub.send(.purchaseStage(orderNo: order.orderNo, stage: .paying))
        let result: StorePurchaseResult
        do {
            result = try await store.purchase(productID: product.appStoreProductID ?? product.id, appAccountToken: order.orderUUID)
        } catch {
            // The store refused before charging: the order will never be paid.
            let failure = (error as? StoreFailure) ?? .other("\(error)")
            if let settled = await giveUp(entry), settled.state == .fulfilled { return report(settled) }
            return report(outcome(failure == .storeKit(.userCancelled) ? .cancelled : .failed(.store(failure))))
        }
        switch result {
        case .success(let transaction):
            return await process(transaction)
        case .pending:
            entry.stage = .pendingApproval
            try? await save(&entry)
            hub.send(.purchaseStage(orderNo: order.orderNo, stage: .awaitingApproval))
            return report(outcome(.pending))
        case .userCancelled:
            if let settled = await giveUp(entry), settled.state == .fulfilled { return report(settled) }
            return report(outcome(.cancelled))
        }
    }

    /// Records one transaction with the server and finishes it on a definitive verdict. A caller that meets a
    /// transaction already being recorded waits for that recording and gets its outcome.
    func process(_ transaction: StoreTransaction) async -> PurchaseOutcome {
        if let running = recordings[transaction.id] { return await running.value }
        // Not a child task: a recording once started is seen through even if its caller is cancelled.
        let recording = Task { await self.record(transaction) }
        recordings[transaction.id] = recording
        let outcome = await recording.value
        recordings[transaction.id] = nil
        return outcome
    }

    private func record(_ transaction: StoreTransaction) async -> PurchaseOutcome {
        var entry = await journalEntry(for: transaction)
        let orderNo = entry?.orderNo
        if var current = entry {
            current.stage = .submitting
            current.transactionID = transaction.id
            current.signedTransaction = transaction.jwsRepresentation
            try? await save(&current)
            entry = current
        }
        if let orderNo { hub.send(.purchaseStage(orderNo: orderNo, stage: .recording)) }
        let fallback = PurchaseOutcome(
            orderNo: orderNo, productID: entry?.productID ?? transaction.productID, channel: .appStore, state: .awaitingConfirmation)
        let response: AppStoreSubmissionResponse
        do {
            response = try await api.submit(signedTransaction: transaction.jwsRepresentation)
        } catch let problem as ServerProblem {
            // No verdict: the transaction stays unfinished (StoreKit delivers it again) and the entry stays.
            log(.warning, "transaction not recorded yet", ["transaction_id": String(transaction.id), "reason": problem.description])
            if var current = entry {
                current.attempts += 1
                try? await save(&current)
            }
            return report(problem.isRetryable ? fallback : PurchaseOutcome(
                orderNo: orderNo, productID: fallback.productID, channel: .appStore, state: .failed(.server(problem))))
        } catch {
            return report(fallback)
        }
        guard let verdict = response.transactions.first(where: { $0.transactionID == String(transaction.id) }) ?? response.transactions.first else {
            return report(fallback)
        }
        if transaction.isVerified {
            await store.finish(transaction)
            hub.send(.transactionFinished(transactionID: transaction.id, orderNo: verdict.order?.orderNo ?? orderNo))
        }
        if let entry { await journal.remove(entry.id) }
        await refreshEntitlements()
        let order = verdict.order
        var outcome = PurchaseOutcome(
            orderNo: order?.orderNo ?? orderNo, productID: order?.productID ?? fallback.productID, channel: .appStore, state: .fulfilled, order: order)
        switch verdict.verdict {
        case .recorded:
            if let order, let settled = PurchaseOutcome.settled(order) { outcome = settled }
            if !transaction.isVerified { outcome.state = .failed(.unverifiedTransaction(transaction.verificationFailure ?? "")) }
        case .rejected:
            let code = verdict.error?.code ?? "rejected"
            outcome.state = code == "transaction_revoked" ? .refunded : .failed(.rejected(code: code, message: verdict.error?.message ?? ""))
        }
        return report(outcome)
    }

    /// The journal entry of a transaction: the one whose order UUID it carries, or which already holds it.
    func journalEntry(for transaction: StoreTransaction) async -> JournalEntry? {
        let entries = await journal.entries().entries
        return entries.first { entry in
            entry.channel == .appStore
                && ((transaction.appAccountToken != nil && entry.orderUUID == transaction.appAccountToken) || entry.transactionID == transaction.id)
        }
    }

    /// A purchase that will not be paid through this entry: the order is cancelled on the server (which first asks
    /// the provider, so a paid order is never cancelled) and the entry removed once the server's answer is final.
    /// Returns the order's outcome when it turned out settled (paid after all), nil when cancelled or unknown.
    @discardableResult
    func giveUp(_ entry: JournalEntry) async -> PurchaseOutcome? {
        guard let orderNo = entry.orderNo else {
            await journal.remove(entry.id)
            return nil
        }
        do {
            _ = try await api.cancel(orderNo)
        } catch let problem as ServerProblem where problem.isRetryable {
            return nil  // asked again at the next resume
        } catch {
            // 409: no longer cancellable (paid, or closed meanwhile): the order's own status says which.
        }
        guard let order = try? await api.order(orderNo), order.status.isFinal else { return nil }
        await journal.remove(entry.id)
        let settled = PurchaseOutcome.settled(order)
        return settled?.state == .cancelled ? nil : settled
    }
}
