import Ledger

/// The ledger's roles the App Store's payments use: a recording's (orders, payments, the inbox, jobs, subscription
/// signals), opening writes, the statements checked, the offers signed and the app purchases shown.
public typealias AppStoreLedger = LedgerTransactions & LedgerWrite & StatementBook & OfferBook & AppPurchaseBook
