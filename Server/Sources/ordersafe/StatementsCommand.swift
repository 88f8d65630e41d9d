import ArgumentParser
import Engine
import Foundation
import Logging
import OrderSafeModel
import OrderSafeServer

/// `ordersafe reconcile statements --date YYYY-MM-DD [--channel …]`: one day's provider statements checked against
/// the ledger now, a progress bar on a terminal, then one JSON summary line. Exits 3 when a difference is flagged.
struct StatementsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statements",
        abstract: "Check one day's provider statements against the ledger, recovering what the providers confirm.",
        discussion: """
            Prints one JSON line: the day and, per channel, its status and the counts and sums matched, recovered \
            and flagged. Exit status 0 when every statement balances or is not published yet, 3 when a difference \
            is flagged (the console's Statements page lists each one with its evidence).
            """)

    @OptionGroup var settings: SettingsOptions

    @Option(
        name: .long,
        help: "The provider's day, YYYY-MM-DD (in the provider's own zone: Beijing for the Chinese wallets).")
    var date: String

    @Option(name: .long, help: "A channel to check (repeatable); every channel with statements when absent.")
    var channel: [String] = []

    /// The summary line: one object per channel, without the lists of differences.
    struct Summary: Encodable {
        struct Line: Encodable {
            var channel: String
            var status: String
            var matched: StatementReport.Tally
            var recovered: StatementReport.Tally
            var refunds_matched: StatementReport.Tally
            var refunds_recovered: StatementReport.Tally
            var other_day: Int
            var flagged: StatementReport.Tally
            var waiting_for: String?
            var fund_flow: FundFlow?
        }

        /// The fund-flow bill's check, without its list of differences.
        struct FundFlow: Encodable {
            var status: String
            var matched: Int
            var only_in_trade_bill: Int
            var only_in_fund_flow: Int
            var differing: Int

            init(_ check: FundFlowCheck) {
                (status, matched, differing) = (check.status.rawValue, check.matched, check.differing)
                (only_in_trade_bill, only_in_fund_flow) = (check.onlyInTradeBill, check.onlyInFundFlow)
            }
        }

        var day: String
        var matched: Int
        var recovered: Int
        var flagged: Int
        var channels: [Line]
    }

    func validate() throws {
        guard StatementDay(date) != nil else {
            throw ValidationError("--date must be a day as YYYY-MM-DD, not '\(date.prefix(32))'")
        }
        for name in channel where Channel(rawValue: name) == nil {
            throw ValidationError(
                "--channel must be one of \(Channel.allCases.map(\.rawValue).joined(separator: ", ")); not '\(name.prefix(32))'"
            )
        }
    }

    func run() async throws {
        guard let day = StatementDay(date) else { throw ValidationError("--date must be YYYY-MM-DD") }
        let loaded = try await settings.load()
        loaded.server.logFormat.bootstrap(level: .warning)
        let interactive = isatty(STDERR_FILENO) != 0
        let reports = try await OrderSafeApplication.reconcileStatements(
            settings: loaded, day: day, channels: channel.compactMap(Channel.init(rawValue:)),
            logger: Logger(label: "ordersafe.statements")
        ) { channel, done, total in
            guard interactive, done == total || done % 500 == 0 else { return }
            let bar = "\r\(channel.rawValue) " + ProgressBar.line(done: done, total: total)
            FileHandle.standardError.write(Data((bar + (done == total ? "\n" : "")).utf8))
        }
        let summary = Summary(
            day: day.description, matched: reports.reduce(0) { $0 + $1.matched.count },
            recovered: reports.reduce(0) { $0 + $1.recovered.count + $1.refundsRecovered.count },
            flagged: reports.reduce(0) { $0 + $1.flagged.count },
            channels: reports.map { report in
                Summary.Line(
                    channel: report.channel.rawValue, status: report.status.rawValue, matched: report.matched,
                    recovered: report.recovered, refunds_matched: report.refundsMatched,
                    refunds_recovered: report.refundsRecovered, other_day: report.otherDay, flagged: report.flagged,
                    waiting_for: report.waitingFor, fund_flow: report.fundFlow.map(Summary.FundFlow.init))
            })
        print(String(decoding: try OrderSafeJSON.encoder().encode(summary), as: UTF8.self))
        if summary.flagged > 0 { throw ExitCode(3) }
    }
}
