import Logging

/// A trade a payment sandbox keeps, known by the merchant's order number.
protocol SandboxTrade: Codable, Sendable {
    var outTradeNo: String { get }
}

/// One line of a payment sandbox's journal (``SandboxJournal``): a trade as it is from now on, with the notification
/// its change sent, if any; or the merchant's acknowledgement of a notification.
enum SandboxTradeRecord<Trade: SandboxTrade>: Codable {
    case trade(Trade, notification: SandboxNotice?)
    case acknowledged(id: String)
}

extension SandboxTradeRecord {
    /// The trades, by order number, and the notifications not acknowledged that `records` leave.
    static func replay(_ records: [Self]) -> (
        trades: [String: Trade], waiting: [CourierNotice]
    ) {
        var trades: [String: Trade] = [:]
        var waiting: [String: CourierNotice] = [:]
        for record in records {
            switch record {
            case .trade(let trade, let notice):
                trades[trade.outTradeNo] = trade
                if let notice { waiting[notice.id] = notice.courierNotice(about: trade.outTradeNo) }
            case .acknowledged(let id):
                waiting[id] = nil
            }
        }
        return (trades, Array(waiting.values))
    }

    /// What the journal must hold for a restart to find `trades` and the notifications `waiting` as they are: each
    /// trade once, then each notification not acknowledged yet with its trade.
    static func holding(trades: [String: Trade], waiting: [CourierNotice]) -> [Self] {
        var records = trades.keys.sorted().map { Self.trade(trades[$0]!, notification: nil) }
        for notice in waiting.sorted(by: { $0.id < $1.id }) {
            guard let trade = trades[notice.outTradeNo] else { continue }
            records.append(.trade(trade, notification: SandboxNotice(notice)))
        }
        return records
    }
}

extension SandboxJournal {
    /// Compacts the journal to what `holding` says is held now, once it has grown enough; a failure is logged (the
    /// journal stays as it is, longer).
    func compactIfDue(_ holding: () -> [Record], sandbox: String, logger: Logger) {
        guard wantsCompaction else { return }
        do {
            try compact(holding())
        } catch {
            logger.error("sandbox \(sandbox) journal not compacted", metadata: ["error": "\(error)"])
        }
    }

    /// Writes down the merchant's acknowledgement of notification `id`, then compacts when due; a failure is logged:
    /// the notification goes again after a restart.
    func acknowledge<Trade>(_ id: String, holding: () -> [Record], sandbox: String, logger: Logger)
    where Record == SandboxTradeRecord<Trade> {
        do {
            try append(.acknowledged(id: id))
            compactIfDue(holding, sandbox: sandbox, logger: logger)
        } catch {
            logger.error(
                "sandbox \(sandbox) journal not written; the notification is sent again after a restart",
                metadata: ["error": "\(error)"])
        }
    }
}
