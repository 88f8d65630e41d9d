import AppStore
import ChannelSupport
import Foundation
import Ledger
import Metrics
@_spi(OrderSafeServer) import OrderSafeModel
import Synchronization

/// The App Store channel of the order engine: turns verified transactions — submitted by the app as StoreKit 2
/// JWS or StoreKit 1 receipts, or delivered as Server Notifications V2 — into ledger changes, exactly once.
///
/// Binding: a transaction's `appAccountToken` (StoreKit 1: `applicationUsername`, a UUID or `"userID#orderNo"`)
/// names the order and so its user. A transaction that names no order of ours is adopted into a new order for
/// the submitting user, or for the user who owns its original transaction (renewals); a transaction for another
/// product than its order, or one more payment for an order already paid (a renewal), is adopted for the same
/// user. Family-shared transactions belong to the family member who submits them. Whoever submits it, a payment
/// is credited to the user it belongs to; another user's submission is refused and noted on the order.
///
/// A class: each step of a submission that captures or passes the channel copied a struct of thirteen fields,
/// retaining each reference in them; a class is one reference.
public final class AppStorePayments: Sendable {
    let verifier: AppStoreVerifier
    let receipts: ReceiptValidator?
    /// The App Store Server API, for history pulls and restores; nil when no API key is configured.
    let api: AppStoreServerAPIClient?
    /// Signs subscription offers with the In-App Purchase key; nil when none is configured.
    let offers: AppStoreOfferSigner?
    /// Asks the merchant's backend about offers whose rule wants its word; nil when none is configured.
    let offerHook: MerchantOfferHook?
    /// Whether `CONSUMPTION_REQUEST` notifications are answered (the merchant's users consented to it).
    let answersConsumptionRequests: Bool
    let context: EngineContext<any AppStoreLedger>
    let identities: OrderIdentityGenerator
    /// The submissions this process has applied: resends it knows are answered without the writer.
    let applied: AppliedSubmissions
    /// The causes of held submissions the operator was told of lately, per user.
    let heldCauses = RecentValues<HeldCause, Void>(generation: 1_000)
    /// What each user's refused submissions may make the inbox keep.
    let refusals = RefusalBudget()
    /// How hard a statement day asks for transaction histories.
    let historyBudget = RequestBudget.appStoreHistories
    /// The transaction histories a statement day asked for so far, by the transaction asked about: a day stopped
    /// midway resumes where it stopped.
    let dayHistories = StatementDayProgress<[String]>()

    public convenience init(
        verifier: AppStoreVerifier, receipts: ReceiptValidator?, api: AppStoreServerAPIClient? = nil,
        offers: AppStoreOfferSigner? = nil, offerHook: MerchantOfferHook? = nil,
        answersConsumptionRequests: Bool = false, identities: OrderIdentityGenerator,
        context: EngineContext<any AppStoreLedger>
    ) {
        self.init(
            verifier: verifier, receipts: receipts, api: api, offers: offers, offerHook: offerHook,
            answersConsumptionRequests: answersConsumptionRequests, identities: identities,
            context: context, applied: AppliedSubmissions())
    }

    init(
        verifier: AppStoreVerifier, receipts: ReceiptValidator?, api: AppStoreServerAPIClient?,
        offers: AppStoreOfferSigner?, offerHook: MerchantOfferHook?, answersConsumptionRequests: Bool,
        identities: OrderIdentityGenerator, context: EngineContext<any AppStoreLedger>, applied: AppliedSubmissions
    ) {
        self.verifier = verifier
        self.receipts = receipts
        self.api = api
        self.offers = offers
        self.offerHook = offerHook
        self.answersConsumptionRequests = answersConsumptionRequests
        self.context = context
        self.identities = identities
        self.applied = applied
    }

    // MARK: Submissions

    /// Verifies and records what the app submitted. Throws ``AppStoreSubmissionError`` when the app must keep the
    /// transaction unfinished and try again; everything permanent is a `rejected` result.
    ///
    /// Verification runs first, on the caller's task (every core); then the inbox entry, the order, the payment with
    /// its grants, events and webhook rows and the entry's verdict are written as one transaction, which commits with
    /// the other submissions of its group before the answer goes out.
    ///
    /// What did not verify is anyone's bytes: kept as a refused signal (its first bytes, purged later), never whole.
    /// What is kept whole is what Apple signed, in one spelling: a receipt's base64 as its bytes encode, so padding
    /// a genuine receipt makes no new entry.
    public func submit(_ submission: AppStoreSubmission, userID: String) async throws -> AppStoreSubmissionResponse {
        let submission = try Self.canonical(submission)
        let verified: VerifiedSubmission
        switch (submission.signedTransaction, submission.receipt) {
        case (let jws?, nil):
            verified = await verify(signedTransaction: jws)
        case (nil, let receipt?):
            verified = await verify(
                receipt: receipt, transactionID: submission.transactionID,
                applicationUsername: submission.applicationUsername)
        default:
            throw AppStoreSubmissionError.malformed("give exactly one of signed_transaction and receipt")
        }
        switch verified {
        case .rejected(let result):
            let body = submission.inboxJSON
            if refusals.spend(min(body.count, SQLLedger.refusedBodyBytes), user: userID, now: context.clock.now()) {
                try await Inbox(context: context.narrowed { $0 }).refused(
                    inboundSignal(body, kind: .submission, userID: userID), reason: result.error?.message ?? "rejected")
            } else {
                Counter(label: "ordersafe_refused_submissions_not_kept_total").increment()
            }
            return AppStoreSubmissionResponse(transactions: [result])
        case .unavailable(.unverifiable(let reason)):
            try await hold(
                inboundSignal(submission.inboxJSON, kind: .submission, userID: userID), userID: userID, reason: reason)
        case .purchases, .unavailable: break
        }
        return try await storedAtomically(
            submission, kind: .submission, userID: userID, lookingUp: Self.firstLookup(verified)
        ) { evidence, scope in
            AppStoreSubmissionResponse(
                transactions: try await self.record(verified, submitter: userID, evidence: evidence, in: scope))
        }
    }

    /// The longest `transaction_id` and `application_username` a submission may carry: Apple's transaction ids are
    /// 15–20 digits; an `applicationUsername` is an order UUID or `"userID#orderNo"` (Apple asks for an opaque
    /// identifier such as a hash, not personal data).
    static let maxIdentifierBytes = 64
    static let maxApplicationUsernameBytes = 256

    /// `submission` as it is verified and kept: bounded identifiers, and a receipt's base64 re-encoded from its bytes
    /// (whatever line breaks or other characters the app's text carried).
    static func canonical(_ submission: AppStoreSubmission) throws -> AppStoreSubmission {
        guard (submission.transactionID?.utf8.count ?? 0) <= maxIdentifierBytes,
            (submission.applicationUsername?.utf8.count ?? 0) <= maxApplicationUsernameBytes
        else {
            throw AppStoreSubmissionError.malformed(
                "transaction_id is at most \(maxIdentifierBytes) bytes, application_username at most "
                    + "\(maxApplicationUsernameBytes)")
        }
        var canonical = submission
        if let receipt = submission.receipt,
            let der = Data(base64Encoded: receipt, options: .ignoreUnknownCharacters), !der.isEmpty
        {
            canonical.receipt = der.base64EncodedString()
        }
        return canonical
    }

    /// A submission kept and recorded in one transaction (``Inbox/atomically(_:lookingUp:_:)``). `work` runs
    /// on the ledger's writer: only ledger work; whatever else it asks for (``LedgerWrite/afterCommit(_:)``) runs
    /// once it has committed. A resend this process applied is answered from what is recorded, by readers; one it
    /// does not know (``AppliedSubmissions``) is found by the entry's insert, and `work` answers it on the writer.
    ///
    /// - Parameter query: the lookup `work` starts with, made with the entry's insert (``PrefetchedLookup``).
    func storedAtomically<Result: Sendable>(
        _ submission: AppStoreSubmission, kind: InboxKind, userID: String, lookingUp query: PaymentQuery? = nil,
        _ work: @escaping @Sendable (String, RecordingScope) async throws -> Result
    ) async throws -> Result {
        let keyed = try KeyedSignal(inboundSignal(submission.inboxJSON, kind: kind, userID: userID))
        let key = AppliedSubmissions.Key(keyed)
        if let entryID = applied.entryID(for: key) {
            return try await work("inbox:\(entryID)", RecordingScope(write: context.ledger))
        }
        let (result, entryID) = try await Inbox(context: context.narrowed { $0 }).atomically(
            keyed, lookingUp: query
        ) { evidence, prefetched, write in
            try await work(evidence, RecordingScope(write: write, prefetched: prefetched))
        }
        applied.remember(key, entryID: entryID)
        return result
    }

    /// `body` is the request as JSON with sorted keys (what the inbox has always stored and keyed).
    private func inboundSignal(_ body: [UInt8], kind: InboxKind, userID: String) -> InboundSignal {
        InboundSignal(
            channel: .appStore, kind: kind, headers: ["user_id": userID], body: body, receivedAt: context.clock.now())
    }

    /// The lookup recording `verified` starts with, when it is known before the write: one purchase, not revoked
    /// (a revoked one is reversed first, which changes what the lookup would find).
    private static func firstLookup(_ verified: VerifiedSubmission) -> PaymentQuery? {
        guard case .purchases(let purchases) = verified, purchases.count == 1, let purchase = purchases.first,
            !purchase.revoked
        else {
            return nil
        }
        return lookupQuery(purchase)
    }

    private static func lookupQuery(_ purchase: AppStorePurchase) -> PaymentQuery {
        PaymentQuery(
            channel: .appStore, providerTransactionID: purchase.transactionID,
            chainOf: purchase.familyShared ? nil : purchase.originalTransactionID,
            order: purchase.orderUUID.map(PaymentQuery.OrderName.uuid)
                ?? purchase.legacyBinding.map { .number($0.orderNo) })
    }

    /// Records what verification found, for `submitter`.
    func record(_ verified: VerifiedSubmission, submitter: String, evidence: String, in scope: RecordingScope)
        async throws -> [AppStoreTransactionResult]
    {
        switch verified {
        case .unavailable(let error):
            throw error
        case .rejected(let result):
            return [result]
        case .purchases(let purchases):
            var results: [AppStoreTransactionResult] = []
            for purchase in purchases {
                results.append(
                    try await record(purchase, submitter: submitter, cause: .app, evidence: evidence, in: scope))
            }
            return results
        }
    }

    func verify(signedTransaction jws: String) async -> VerifiedSubmission {
        let transaction: JWSTransaction
        do {
            transaction = try await verifier.verifyTransaction(jws)
        } catch .retryableVerificationFailure(let reason) {
            return .unavailable(.verificationUnavailable(reason))
        } catch {
            // What this server's settings decide (the bundle or app id, the environment, the trusted roots) is held
            // whole for a replay once they are fixed; a body no StoreKit transaction comes near, a malformed one, or a
            // signature its own certificate refutes is refused (the app keeps it unfinished either way).
            guard jws.utf8.count <= Self.maxHeldTransactionBytes,
                Self.dependsOnSettings(error, anchored: { verifier.chainAnchorsInKnownRoot(jws) })
            else {
                return .rejected(
                    Self.rejected(transactionID: "", code: "invalid_transaction", message: error.description))
            }
            return .unavailable(.unverifiable(error.description))
        }
        guard let purchase = AppStorePurchase(transaction) else {
            return .rejected(
                Self.rejected(
                    transactionID: transaction.transactionId ?? "", code: "invalid_transaction",
                    message: "the transaction has no id or product"))
        }
        return .purchases([purchase])
    }

    func verify(receipt base64: String, transactionID: String?, applicationUsername: String?) async
        -> VerifiedSubmission
    {
        guard let receipts else {
            return .rejected(
                Self.rejected(
                    transactionID: transactionID ?? "", code: "receipts_not_accepted",
                    message: "this server takes StoreKit 2 signed transactions only"))
        }
        guard let der = Data(base64Encoded: base64, options: .ignoreUnknownCharacters), !der.isEmpty else {
            return .rejected(
                Self.rejected(
                    transactionID: transactionID ?? "", code: "invalid_receipt", message: "the receipt is not base64"))
        }
        let receipt: AppReceipt
        do {
            switch try await receipts.validate(Array(der)) {
            case .valid(let valid): receipt = valid
            case .invalid(let reason):
                return .rejected(
                    Self.rejected(transactionID: transactionID ?? "", code: "invalid_receipt", message: reason))
            }
        } catch {
            return .rejected(
                Self.rejected(transactionID: transactionID ?? "", code: "invalid_receipt", message: "\(error)"))
        }
        guard receipt.bundleID == verifier.bundleID || verifier.bundleID == nil else {
            return .rejected(
                Self.rejected(
                    transactionID: transactionID ?? "", code: "invalid_receipt",
                    message: "the receipt is for bundle \(receipt.bundleID)"))
        }
        let entries = receipt.inApp.filter { transactionID == nil || $0.transactionID == transactionID }
        guard !entries.isEmpty else {
            return .rejected(
                Self.rejected(
                    transactionID: transactionID ?? "", code: "transaction_not_in_receipt",
                    message: "the receipt holds no such transaction"))
        }
        // The applicationUsername belongs to the transaction the app is finishing, not to the rest of the receipt.
        return .purchases(
            entries.compactMap {
                AppStorePurchase($0, applicationUsername: transactionID == nil ? nil : applicationUsername)
            })
    }

    // MARK: Binding and fulfilment

    /// Binds a verified purchase to its order (or adopts it) and fulfils it once. `submitter` is the signed-in user
    /// for app submissions, nil for notifications.
    func record(
        _ purchase: AppStorePurchase, submitter: String?, cause: EventCause, evidence: String, in scope: RecordingScope
    ) async throws -> AppStoreTransactionResult {
        let ledger = scope.write
        let id = purchase.transactionID
        if purchase.revoked {
            // Apple took it back (a refund; for a family-shared purchase, a revocation). Recorded before: reversed
            // now, once. Not recorded yet: the reversal waits, and recording the purchase below takes it back in the
            // same step, so the ledger shows it paid and refunded and the submitter hears transaction_revoked.
            let outcome = try await ledger.reverse(
                Reversal(
                    channel: .appStore, providerTransactionID: id, kind: purchase.familyShared ? .revoked : .refunded,
                    cause: cause,
                    evidence: evidence),
                at: context.clock.now())
            guard outcome == .unknownPayment else {
                return try await answer(
                    try await recordedOrder(id, in: ledger), purchase: purchase, submitter: submitter, cause: cause,
                    in: ledger)
            }
            var paid = purchase
            paid.revoked = false
            return try await record(paid, submitter: submitter, cause: cause, evidence: evidence, in: scope)
        }
        // Whose subscription chain it is, whether signals wait for its owner, and the order it names, asked with the
        // payment: the binding, adoption, the history pull and the waiting signals below need them.
        let query = Self.lookupQuery(purchase)
        let lookup =
            if let prefetched = scope.prefetched?.take(query) { prefetched } else { try await ledger.payment(query) }
        let chainOwner = lookup.chainOwner
        if let recorded = lookup.payment {
            if let periodEnd = purchase.periodEnd {
                // Apple moved the period's end (RENEWAL_EXTENDED, a renewal date extension): extend what it granted.
                _ = try await ledger.extendPeriod(
                    channel: .appStore, providerTransactionID: id, until: periodEnd, cause: cause, evidence: evidence,
                    at: context.clock.now())
            }
            return try await answer(
                try await self.order(number: recorded.orderNo, in: ledger), purchase: purchase, submitter: submitter,
                cause: cause, in: ledger)
        }
        guard let product = context.catalog.catalog.product(appStoreProductID: purchase.productID),
            let price = product.price(for: .appStore)
        else {
            throw AppStoreSubmissionError.productNotInCatalog(purchase.productID)
        }

        guard
            let binding = try await binding(
                for: purchase, product: product, submitter: submitter, lookup: lookup, in: ledger)
        else {
            throw AppStoreSubmissionError.unbound(id)
        }
        // A subscription chain this payment gives its first owner: its history is pulled once it is answered, so
        // periods nobody brought (the original purchase, renewals whose notifications never came) are granted.
        let newChain = api != nil && purchase.periodEnd != nil && !purchase.familyShared && chainOwner == nil
        // Recorded at what the App Store charged (its storefront's price, or an offer's) when the transaction says.
        let (order, outcome) = try await fulfil(
            purchase, binding, product: product, price: purchase.charged ?? price, in: ledger
        ) { orderNo, amount in
            VerifiedPayment(
                channel: .appStore, providerTransactionID: id, orderNo: orderNo, amount: amount, cause: cause,
                evidence: evidence + (purchase.familyShared ? " family_shared" : "")
                    + (purchase.offer.map { " offer:\($0)" } ?? ""),
                periodEnd: purchase.periodEnd, sandbox: purchase.sandbox,
                originalTransactionID: purchase.familyShared ? nil : purchase.originalTransactionID,
                pricedByProvider: true, offer: purchase.offer)
        }
        context.log(
            outcome, "appstore transaction recorded", ["transaction_id": "\(id)", "order_no": "\(order.orderNo)"])
        switch outcome {
        case .fulfilled(let paid), .flagged(let paid, _):
            if newChain {
                // Its history is pulled by a job queued with the payment: the answer never waits for Apple's API, and
                // a pull that fails is tried again.
                try await ledger.enqueue(
                    NewJob(kind: .appStoreChainHistory, key: id, payload: paid.userID, runAt: context.clock.now()))
            }
            // Signals that began to wait after the lookup are applied by the inbox sweep.
            let (chain, awaited) = (purchase.originalTransactionID, lookup.signalsAwaitChain)
            let applying = scope.applyingChain
            // A notification keeps its own signals; an app's submission or a history pull keeps its transaction's.
            let signal = cause == .notification ? nil : purchase.subscriptionSignal
            let gainedOwner = chainOwner == nil && !purchase.familyShared
            await ledger.afterCommit { [self] in
                if let signal { await keep(signal, chainGainedOwner: gainedOwner, cause: cause, evidence: evidence) }
                if awaited { await applyAwaitingSignals(chain: chain, applying: applying) }
            }
            return try await answer(paid, purchase: purchase, submitter: submitter, cause: cause, in: ledger)
        case .duplicate(let orderNo):
            return try await answer(
                try await self.order(number: orderNo, in: ledger), purchase: purchase, submitter: submitter,
                cause: cause, in: ledger)
        case .conflict(_, let recordedFor):
            // Recorded for another order than the one this transaction names: the ledger flagged the one it names;
            // the verdict is about the transaction, which is recorded (for the order it was recorded for).
            return try await answer(
                try await self.order(number: recordedFor, in: ledger), purchase: purchase, submitter: submitter,
                cause: cause, in: ledger)
        }
    }

    /// The order a recorded transaction belongs to.
    private func recordedOrder(_ transactionID: String, in ledger: any LedgerWrite) async throws -> Order {
        let lookup = try await ledger.payment(
            channel: .appStore, providerTransactionID: transactionID, chainOf: nil)
        guard let recorded = lookup.payment else { throw LedgerError.unknownOrder("appstore:\(transactionID)") }
        return try await order(number: recorded.orderNo, in: ledger)
    }

    private func order(number: String, in ledger: any LedgerWrite) async throws -> Order {
        guard let order = try await ledger.order(number: number) else { throw LedgerError.unknownOrder(number) }
        return order
    }

    /// The order a new purchase is recorded against, or the user an order is adopted for; nil when it names no user
    /// at all (a notification for a transaction that names no order of ours and renews nothing we know).
    /// `lookup` (``lookupQuery(_:)``'s) has the order the purchase names and the owner of its subscription chain (nil
    /// for a family-shared purchase).
    private func binding(
        for purchase: AppStorePurchase, product: CatalogProduct, submitter: String?, lookup: PaymentLookup,
        in ledger: any LedgerWrite
    )
        async throws
        -> Binding?
    {
        var owner = submitter
        // The order the purchase names came with the lookup (``lookupQuery(_:)``), by UUID or by a legacy number.
        if purchase.orderUUID != nil, let bound = lookup.namedOrder, bound.channel == .appStore {
            if bound.productID == product.id, !bound.status.isFinal { return .order(bound) }
            owner = bound.userID
        } else if let legacy = purchase.legacyBinding, let bound = lookup.namedOrder,
            bound.userID == legacy.userID, bound.channel == .appStore
        {
            if bound.productID == product.id, !bound.status.isFinal { return .order(bound) }
            owner = bound.userID
        } else if let chainOwner = lookup.chainOwner {
            // A subscription chain belongs to whoever owns any transaction of it: the app may have submitted a
            // renewal only, never the original purchase.
            owner = chainOwner
        } else if let uuid = purchase.orderUUID, let submitter, let tags = identities.accountTags,
            AccountTokenTag.isTagged(uuid), !tags.names(submitter, in: uuid)
        {
            // Its order is not in the ledger (lost with a database restored from an older backup), and its token
            // says it was bought for someone else: never adopted for whoever has the phone now. It stays unfinished
            // on the phone until its buyer submits it.
            throw AppStoreSubmissionError.anotherUsersToken(purchase.transactionID)
        }
        return owner.map(Binding.adopt(owner:))
    }

    /// What a purchase is recorded against.
    private enum Binding {
        case order(Order)
        case adopt(owner: String)
    }

    /// Records a purchase's payment against its order: an adopted order is created with it in one step when nothing
    /// stands in the way, else created and paid apart (which says whose payment it is when another order has it).
    /// `price`: what an adopted order costs; a bound order is paid what the App Store charged, else its own amount.
    private func fulfil(
        _ purchase: AppStorePurchase, _ binding: Binding, product: CatalogProduct, price: Money,
        in ledger: any LedgerWrite,
        payment: (_ orderNo: String, _ amount: Money) -> VerifiedPayment
    ) async throws -> (order: Order, outcome: FulfilmentOutcome) {
        let order: Order
        switch binding {
        case .order(let bound):
            order = bound
        case .adopt(let owner):
            let new = adoption(of: purchase, product: product, price: price, for: owner)
            let identity = identities.next(for: owner)
            switch try await ledger.fulfil(
                payment(identity.orderNo, price), adopting: new, as: identity, at: context.clock.now())
            {
            case .fulfilled(let paid)?: return (paid, .fulfilled(paid))
            case .flagged(let paid, let reason)?: return (paid, .flagged(paid, reason))
            case .duplicate?, .conflict?, nil: break
            }
            // Recorded since the lookup (another replica's submission of it): its order answers; nothing is made.
            if let recorded = try await ledger.payment(
                channel: .appStore, providerTransactionID: purchase.transactionID)
            {
                return (
                    try await self.order(number: recorded.orderNo, in: ledger), .duplicate(orderNo: recorded.orderNo)
                )
            }
            order = try await ledger.createOrder(new, identity: { identities.next(for: owner) }).order
        }
        return (
            order,
            try await ledger.fulfil(payment(order.orderNo, purchase.charged ?? order.amount), at: context.clock.now())
        )
    }

    /// Once a subscription chain has an owner, the notifications of it that waited for one are applied at once, in
    /// Apple's order (`signedDate`), each exactly once. A failure leaves them waiting for the inbox sweep.
    /// `applying`: the chain whose waiting signals the caller is applying already (applying them does not start over).
    func applyAwaitingSignals(chain: String, applying: String?) async {
        guard applying != chain else { return }
        do {
            let waiting = try await context.ledger.signalsAwaiting(chain: chain)
            guard !waiting.isEmpty else { return }
            for signal in waiting {
                _ = try await handleNotification(body: signal.body, applyingChain: chain)
            }
            context.logger.info(
                "waiting notifications of a subscription applied",
                metadata: ["chain": "\(chain)", "count": "\(waiting.count)"])
        } catch {
            context.logger.warning(
                "waiting notifications not applied yet; the inbox sweep will",
                metadata: ["chain": "\(chain)", "error": "\(error)"])
        }
    }

    /// The namespace of adoption idempotency keys, which user keys may not enter.
    public static let adoptionKeyPrefix = "appstore:"

    /// The order adopted for a transaction that came without one; the idempotency key makes adoption happen once per user.
    private func adoption(of purchase: AppStorePurchase, product: CatalogProduct, price: Money, for userID: String)
        -> NewOrder
    {
        NewOrder(
            userID: userID, productID: product.id, channel: .appStore, amount: price,
            catalogVersionID: context.catalog.version.id,
            origin: .adopted,
            idempotency: IdempotencyToken(
                key: Self.adoptionKeyPrefix + purchase.transactionID, requestSHA256: "adopted"),
            createdAt: context.clock.now())
    }

    /// The verdict for a purchase recorded against `order`: recorded, whatever became of it (a refund or revocation
    /// is recorded too: the order says `refunded` or `revoked`), so the app finishes it. Submitted by someone other
    /// than the order's owner (another account signed in on the device): recorded for its owner, and the answer
    /// carries no order, since the order is not the submitter's to see.
    private func answer(
        _ order: Order, purchase: AppStorePurchase, submitter: String?, cause: EventCause, in ledger: any LedgerWrite
    ) async throws -> AppStoreTransactionResult {
        guard let submitter, submitter != order.userID else {
            return AppStoreTransactionResult(transactionID: purchase.transactionID, verdict: .recorded, order: order)
        }
        try await ledger.note(
            orderNo: order.orderNo, kind: .submittedByOtherUser, cause: cause,
            evidence: "appstore:\(purchase.transactionID) submitted by another user", at: context.clock.now(),
            atMost: 20)
        context.logger.notice(
            "appstore transaction submitted by another user: recorded for its owner",
            metadata: ["transaction_id": "\(purchase.transactionID)", "order_no": "\(order.orderNo)"])
        return AppStoreTransactionResult(transactionID: purchase.transactionID, verdict: .recorded)
    }

    static func rejected(transactionID: String, code: String, message: String) -> AppStoreTransactionResult {
        AppStoreTransactionResult(
            transactionID: transactionID, verdict: .rejected, error: .init(code: code, message: message))
    }
}

/// What verification made of a submission, before anything is recorded.
enum VerifiedSubmission: Sendable {
    case purchases([AppStorePurchase])
    case rejected(AppStoreTransactionResult)
    /// Verification could not be completed: the app submits again.
    case unavailable(AppStoreSubmissionError)
}

/// Why a submission could not be settled now; the app keeps the transaction unfinished and submits it again.
public enum AppStoreSubmissionError: Error, CustomStringConvertible {
    /// The body is not a submission (a client bug; nothing to retry).
    case malformed(String)
    /// Online certificate checks could not be completed.
    case verificationUnavailable(String)
    /// The signed transaction did not verify with this server's settings (bundle id, App Apple ID, environment,
    /// root certificates). That is no verdict about the transaction — a wrong setting fails every genuine purchase
    /// alike — so it is held (``InboxVerdict/held``) until an operator fixes the settings and replays it, and the
    /// app keeps it unfinished.
    case unverifiable(String)
    /// The catalog has no product with this App Store product id (the merchant must add it).
    case productNotInCatalog(String)
    /// A notification for a transaction that names no order and no known original transaction: kept in the inbox
    /// until the app submits it.
    case unbound(String)
    /// An app's submission of a transaction whose order the ledger lacks and whose `appAccountToken` was made for
    /// another user (``AccountTokenTag``): kept unfinished until its buyer submits it.
    case anotherUsersToken(String)

    public var description: String {
        switch self {
        case .malformed(let reason): reason
        case .verificationUnavailable(let reason): "verification could not be completed, retry: \(reason)"
        case .unverifiable(let reason):
            "this server could not verify the transaction with its settings (\(reason)); it is held until an operator fixes "
                + "them and replays it: keep it unfinished"
        case .productNotInCatalog(let id):
            "the catalog has no product with app_store_product_id '\(id)'; the transaction stays unfinished until it has"
        case .unbound(let id): "transaction \(id) names no order and renews no known transaction"
        case .anotherUsersToken(let id):
            "transaction \(id) was bought for another user (its appAccountToken says so) and its order is not in the "
                + "ledger: it stays unfinished until its buyer is signed in"
        }
    }
}
