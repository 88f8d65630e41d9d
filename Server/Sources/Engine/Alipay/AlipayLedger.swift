import Ledger

/// The ledger's roles Alipay's payments use: a recording's (orders, payments, the inbox, jobs) and opening writes.
public typealias AlipayLedger = LedgerTransactions & LedgerWrite
