import Ledger

/// The ledger's roles WeChat Pay's payments use: a recording's (orders, payments, the inbox, jobs) and opening
/// writes.
public typealias WeChatPayLedger = LedgerTransactions & LedgerWrite
