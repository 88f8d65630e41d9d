/// The whole ledger as the order engine's channels see it: the orders and their money, the inbox of what came from
/// outside, the job queue, the webhook outbox, the users' holdings, what the App Store said of their subscriptions,
/// the statements checked, the offers signed and the app purchases shown. Each part of the server takes only the roles it uses (the job runner a ``JobQueue``, the webhook dispatcher a ``WebhookOutbox``, …); ``SQLLedger`` plays them
/// all.
public typealias LedgerStore = LedgerTransactions & LedgerWrite & WebhookOutbox & StatementBook
    & OfferBook & AppPurchaseBook
