import Engine
import Foundation
import HTTPTypes
import Ledger
import OrderSafeModel

/// What an operator can do, for the console and the admin API alike: each action is carried out, logged under the
/// operator's name (and, on an order, in its history), and refused with a ``Refusal`` that both front ends show.
struct OperatorDesk: Sendable {
    let ledger: any OperatorReads & OperatorActions & OrderBook
    let refunds: RefundService
    let reconciler: Reconciler
    /// Checks the providers' statements.
    let statements: StatementReconciler
    /// The channels the server is built with (``ChannelRegistry``), running or not.
    let channels: [Channel]
    /// The channels whose held signals an operator replays, running or not (``PaymentChannel/holdsSignals``).
    let heldChannels: [Channel]
    /// The running ones' replayers.
    let heldReplayers: [Channel: any HeldSignalReplayer]
    let clock: any WallClock

    /// Why an action was not done: an HTTP status, the API's error code and a message.
    struct Refusal: Error, Equatable {
        var status: HTTPResponse.Status
        var code: String
        var message: String

        static func noOrder(_ orderNo: String) -> Refusal {
            Refusal(status: .notFound, code: "order_not_found", message: "no order '\(orderNo.prefix(64))'")
        }
    }

    /// Refunds the order in full through its provider; the outcome as the API names it: `refunded`,
    /// `already_refunded` or `flagged:<reason>`.
    func refund(orderNo: String, reason: String?, operatorName: String) async throws -> (order: Order, outcome: String)
    {
        do {
            let (order, outcome) = try await refunds.refund(
                orderNo: orderNo, reason: reason, operatorName: operatorName)
            let text: String =
                switch outcome {
                case .reversed: "refunded"
                case .flagged(_, let reason): "flagged:\(reason.rawValue)"
                case .alreadyReversed, .unknownPayment, .cancelledByReinstatement: "already_refunded"
                }
            try await ledger.logOperatorAction(
                OperatorAction(
                    operatorName: operatorName, action: .refund, target: orderNo, detail: text, at: clock.now()))
            return (order, text)
        } catch let error as RefundError {
            let status: HTTPResponse.Status =
                switch error {
                case .orderNotFound: .notFound
                case .notRefundable: .unprocessableContent
                case .notPaid: .conflict
                case .provider: .badGateway
                }
            throw Refusal(status: status, code: error.code, message: error.description)
        }
    }

    /// Resolves a flagged order with a note of 1 to 1000 characters (trimmed).
    func resolve(orderNo: String, note: String, operatorName: String) async throws {
        let note = note.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...1000).contains(note.count) else {
            throw Refusal(
                status: .badRequest, code: "invalid_json",
                message: "'note' must say what was decided, in 1 to 1000 characters")
        }
        switch try await ledger.resolveFlag(orderNo: orderNo, operatorName: operatorName, note: note, at: clock.now()) {
        case .done: return
        case .notFound: throw Refusal.noOrder(orderNo)
        case .notApplicable(let reason): throw Refusal(status: .conflict, code: "not_flagged", message: reason)
        }
    }

    /// Asks the order's provider about it now, and notes the answer on the order.
    func query(orderNo: String, operatorName: String) async throws {
        guard let order = try await ledger.order(number: orderNo) else { throw Refusal.noOrder(orderNo) }
        guard reconciler.queries(order.channel) else {
            throw Refusal(
                status: .unprocessableContent, code: "not_queryable",
                message: "\(ChannelLabel.english(order.channel)) orders are not settled by a query on this server")
        }
        let settled: Order?
        do {
            settled = try await reconciler.settle(orderNo: orderNo)
        } catch {
            throw Refusal(
                status: .badGateway, code: "provider_error", message: "the provider could not be asked: \(error)")
        }
        try await ledger.noteOperatorAction(
            orderNo: orderNo,
            OperatorAction(
                operatorName: operatorName, action: .queryProvider, target: orderNo,
                detail: "status \((settled ?? order).status.rawValue)", at: clock.now()))
    }

    /// Processes a stored notification that is not done again (`id` as given in the path).
    func replay(id text: String, operatorName: String) async throws {
        guard text.utf8.count <= 19, let id = Int64(text), id > 0,
            let signal = try await ledger.unfinishedNotification(id: id)
        else {
            throw Refusal(
                status: .notFound, code: "not_found", message: "no unfinished stored notification '\(text.prefix(32))'")
        }
        guard try await reconciler.replay(signal) else {
            throw Refusal(
                status: .conflict, code: Self.notReplayable,
                message: "\(ChannelLabel.english(signal.channel)) notifications cannot be replayed on this server "
                    + "(they expire); query the order instead")
        }
        try await ledger.logOperatorAction(
            OperatorAction(
                operatorName: operatorName, action: .replayNotification, target: String(id), at: clock.now()))
    }

    static let notReplayable = "not_replayable"

    /// Verifies `channel`'s held signals again (after a setting was fixed) and records those that verify for the
    /// users who sent them.
    func replayHeld(_ channel: Channel, operatorName: String) async throws -> HeldReplay {
        guard let replayer = heldReplayers[channel] else {
            throw Refusal(
                status: .conflict, code: "channel_unavailable",
                message: "this server has no \(ChannelLabel.english(channel)) channel")
        }
        let replay = try await replayer.replayHeld(pageSize: 500)
        try await ledger.logOperatorAction(
            OperatorAction(
                operatorName: operatorName, action: .replayHeldSubmissions, target: channel.rawValue,
                detail: "recorded \(replay.recorded), still held \(replay.stillHeld), failed \(replay.failed)",
                at: clock.now()))
        return replay
    }

    /// Schedules a webhook event to be sent again now.
    func redeliver(eventID: String, operatorName: String) async throws {
        guard eventID.utf8.count <= 64,
            try await ledger.redeliverWebhook(eventID: eventID, operatorName: operatorName, at: clock.now()) == .done
        else {
            throw Refusal(status: .notFound, code: "not_found", message: "no webhook event '\(eventID.prefix(64))'")
        }
    }

    /// Checks a channel's day against its provider's statement now, recovering what the provider confirms, and
    /// logs it under the operator's name.
    func reconcile(_ channel: Channel, day: StatementDay, operatorName: String) async throws -> StatementReport {
        guard statements.channels.contains(channel) else {
            throw Refusal(
                status: .unprocessableContent, code: "no_statements",
                message: "\(ChannelLabel.english(channel)) statements are not checked on this server")
        }
        let report: StatementReport
        do {
            report = try await statements.reconcile(channel, day: day)
        } catch let error as StatementError {
            throw Refusal(status: .badGateway, code: "statement_unreadable", message: error.description)
        } catch {
            throw Refusal(
                status: .badGateway, code: "provider_error", message: "the statement could not be fetched: \(error)")
        }
        try await ledger.logOperatorAction(
            OperatorAction(
                operatorName: operatorName, action: .reconcileStatement, target: "\(channel.rawValue) \(day)",
                detail:
                    "\(report.status.rawValue): matched \(report.matched.count), recovered \(report.recovered.count + report.refundsRecovered.count), flagged \(report.flagged.count)",
                at: clock.now()))
        return report
    }
}
