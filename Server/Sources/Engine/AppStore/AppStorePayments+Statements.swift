import AppStore
import Foundation
import Ledger
@_spi(OrderSafeServer) import OrderSafeModel

/// The App Store's statement of a day, read from the App Store Server API: Apple publishes no daily file a merchant
/// can download through it (its financial reports are monthly, in App Store Connect), so the day is listed from the
/// two sources that hold every transaction: the notification history (every purchase, renewal and refund Apple
/// notified, delivered or not: `ONE_TIME_CHARGE` covers consumables and non-consumables,
/// https://developer.apple.com/documentation/appstoreservernotifications/notificationtype) and the transaction
/// history of the day (`startDate`/`endDate` select by `purchaseDate`,
/// https://developer.apple.com/documentation/appstoreserverapi/get-transaction-history) of each customer who could
/// have bought that day — who made an order, had a payment recorded or a subscription period end from the day before
/// to an hour after it — which also holds what no notification announced. Its cost follows the day's buyers, not
/// every customer ever seen; the histories are asked within ``RequestBudget/appStoreHistories``. A payment it lists and the ledger lacks is fetched again by its id (the authority) and
/// recorded through the submission path; one that names no order and renews no known chain waits for its owner.
extension AppStorePayments: StatementSource {
    /// UTC: the App Store Server API dates everything in milliseconds since 1970, with no zone of its own.
    public var utcOffset: Int { 0 }

    /// Each buyer pays in their storefront's currency; the ledger records what Apple charged when its transaction
    /// says (the catalog's price when it does not: a StoreKit 1 receipt).
    public var storefrontPrices: Bool { true }

    /// How long after a day ends it is listed: the notifications of its last minutes are sent by then.
    static let dayListedAfter: TimeInterval = 3600

    /// The App Store as a statement source, when the Server API is configured.
    public var statementSource: (any StatementSource)? { api == nil ? nil : self }

    public func statement(of day: StatementDay) async throws -> StatementAvailability {
        guard let api else { throw StatementError.noStatements(.appStore) }
        let (start, end) = (day.start(utcOffset: utcOffset), day.next.start(utcOffset: utcOffset))
        guard context.clock.now() >= end.addingTimeInterval(Self.dayListedAfter) else {
            return .notYet("the day is not over at the App Store yet")
        }
        var listed = ListedTransactions()
        try await forEachNotification(from: start, to: end.addingTimeInterval(Self.dayListedAfter)) { payload in
            let notification = try await verified(day) { try await verifier.verifyNotification(payload) }
            if let transaction = notification.transaction { listed.add(transaction) }
        }
        let range = [
            ("startDate", String(start.millisecondsSince1970)), ("endDate", String(end.millisecondsSince1970)),
        ]
        let active = try await context.ledger.latestTransactionOfActiveUsers(
            channel: .appStore, from: start.addingTimeInterval(-86400),
            before: end.addingTimeInterval(Self.dayListedAfter))
        // A day an earlier attempt stopped midway (a refused key, an outage) asks only for the histories it lacks.
        let asked = dayHistories.answers(of: day)
        let histories = try await historyBudget.map(active.filter { asked[$0] == nil }) { known -> [String] in
            var history: [String] = []
            do {
                history = try await api.fullTransactionHistory(transactionID: known, query: range)
            } catch {
                // A transaction of another environment, or one Apple no longer knows.
                guard case .api(let status, _, _) = error as? AppStoreServerAPIError, status == 404 else { throw error }
            }
            self.dayHistories.keep(history, to: known, of: day)
            return history
        }
        let earlier: [[String]] = active.compactMap { asked[$0] }
        for signed in (earlier + histories).joined() {
            listed.add(try await verified(day) { try await verifier.verifyTransaction(signed) })
        }
        dayHistories.forget(day)
        return .published(ProviderStatement(day: day, entries: listed.entries(from: start, to: end), totals: nil))
    }

    /// What `verify` made of signed data from the App Store's API; signed data that does not verify makes the day
    /// unreadable (nothing of it is compared).
    private func verified<Value>(_ day: StatementDay, _ verify: () async throws -> Value)
        async throws(StatementError) -> Value
    {
        do {
            return try await verify()
        } catch {
            throw .unreadable(
                .appStore, day: day.description, "signed data from the App Store did not verify: \(error)")
        }
    }

    /// `GET /inApps/v1/transactions/{id}`, verified, and recorded as the app's submission of it would be.
    public func recoverPayment(_ entry: StatementEntry, evidence: String) async throws -> PaymentRecovery {
        let transaction: JWSTransaction
        do {
            transaction = try await askedTransaction(entry.providerTransactionID)
        } catch {
            return .asked(orderNo: nil, answer: "the transaction could not be fetched: \(error)")
        }
        guard let purchase = AppStorePurchase(transaction) else {
            return .asked(orderNo: nil, answer: "a transaction without an id or product")
        }
        do {
            let result = try await record(
                purchase, submitter: nil, cause: .reconciliation, evidence: evidence,
                in: RecordingScope(write: context.ledger))
            return .asked(orderNo: result.order?.orderNo, answer: "\(result.verdict)")
        } catch AppStoreSubmissionError.unbound {
            return .noOrder(
                "transaction \(purchase.transactionID) names no order and renews no chain the ledger knows: it is "
                    + "recorded when its owner's app submits it")
        } catch AppStoreSubmissionError.productNotInCatalog(let id) {
            return .asked(orderNo: nil, answer: "product \(id) is not in the catalog")
        }
    }

    /// The UTC day of the transaction's `purchaseDate`, as the App Store answers for it now.
    public func paymentDay(of payment: RecordedPayment) async throws -> ProviderPayment {
        guard let transaction = try await knownTransaction(payment.providerTransactionID) else { return .notPaid }
        if transaction.isFamilyShared { return .shared }
        return transaction.purchaseDate.map {
            .paid(on: StatementDay(containing: Date(millisecondsSince1970: $0), utcOffset: utcOffset))
        } ?? .notPaid
    }

    /// The UTC day of the transaction's `revocationDate`, as the App Store answers for it now.
    public func refundDay(of payment: RecordedPayment) async throws -> ProviderRefund {
        guard let transaction = try await knownTransaction(payment.providerTransactionID),
            let revoked = transaction.revocationDate
        else { return .notRefunded }
        if transaction.isFamilyShared { return .shared }
        return .refunded(on: StatementDay(containing: Date(millisecondsSince1970: revoked), utcOffset: utcOffset))
    }

    /// ``askedTransaction(_:)``; nil when the App Store does not know it (404).
    private func knownTransaction(_ id: String) async throws -> JWSTransaction? {
        do {
            return try await askedTransaction(id)
        } catch {
            guard case .api(let status, _, _) = error as? AppStoreServerAPIError, status == 404 else { throw error }
            return nil
        }
    }

    /// A refund the App Store lists (never a family-shared one: those are no money): the transaction fetched again;
    /// reversed when Apple dates its revocation.
    public func recoverRefund(_ entry: StatementEntry, of payment: RecordedPayment, evidence: String) async throws
        -> Bool
    {
        let transaction = try await askedTransaction(entry.providerTransactionID)
        guard transaction.revocationDate != nil else { return false }
        let outcome = try await context.ledger.reverse(
            Reversal(
                channel: .appStore, providerTransactionID: payment.providerTransactionID,
                kind: .refunded, cause: .reconciliation, evidence: evidence),
            at: context.clock.now())
        return outcome != .unknownPayment
    }

    /// `GET /inApps/v1/transactions/{id}`, verified.
    private func askedTransaction(_ id: String) async throws -> JWSTransaction {
        guard let api else { throw StatementError.noStatements(.appStore) }
        return try await verifier.verifyTransaction(try await api.transactionInfo(transactionID: id))
    }
}

/// The transactions an App Store day's sources listed, each once (its newest signed form), read as statement entries.
struct ListedTransactions {
    private var byID: [String: JWSTransaction] = [:]

    mutating func add(_ transaction: JWSTransaction) {
        guard let id = transaction.transactionId else { return }
        if let kept = byID[id], (kept.signedDate ?? 0) > (transaction.signedDate ?? 0) { return }
        byID[id] = transaction
    }

    /// A payment per transaction bought in `[start, end)`, a refund per one Apple revoked then, in the order of
    /// their dates (`line` numbers them); family-shared ones are no payment (the purchaser's own transaction is).
    func entries(from start: Date, to end: Date) -> [StatementEntry] {
        let (from, until) = (start.millisecondsSince1970, end.millisecondsSince1970)
        var dated: [(date: Int64, kind: StatementEntry.Kind, transaction: JWSTransaction)] = []
        for transaction in byID.values where !transaction.isFamilyShared {
            if let bought = transaction.purchaseDate, bought >= from, bought < until {
                dated.append((bought, .payment, transaction))
            }
            if let revoked = transaction.revocationDate, revoked >= from, revoked < until {
                dated.append((revoked, .refund, transaction))
            }
        }
        dated.sort { ($0.date, $0.transaction.transactionId ?? "") < ($1.date, $1.transaction.transactionId ?? "") }
        return dated.enumerated().map { index, item in
            let transaction = item.transaction
            return StatementEntry(
                kind: item.kind, line: index + 1,
                orderNo: transaction.appAccountToken?.uuidString.lowercased() ?? "",
                providerTransactionID: transaction.transactionId ?? "", amount: AppStorePurchase.charged(transaction),
                feeMinor: 0
            )
        }
    }
}
