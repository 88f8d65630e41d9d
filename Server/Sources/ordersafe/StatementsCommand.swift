import ArgumentParser
import Engine
import Foundation
import Logging
import OrderSafeModel
import OrderSafeServer

/// `ordersafe reconcile statements --date YYYY-MM-DD [--channel …]`: one day's provider statements checked against
/// the ledger now, a progress bar on a terminal, then one JSON summary line. `--since YYYY-MM-DD` checks every day
/// from that one to today, a line each: after a restore, what the providers took since the backup is recorded — and
/// orders the backup lacks rebuilt from the providers' records (`OrderProvenance`). Exits 3 when a difference is
/// flagged.
struct StatementsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statements",
        abstract: "Check one day's provider statements against the ledger, recovering what the providers confirm.",
        discussion: """
            Prints one JSON line: the day and, per channel, its status and the counts and sums matched, recovered \
            and flagged. Exit status 0 when every statement balances or is not published yet, 3 when a difference \
            is flagged (the console's Statements page lists each one with its evidence). With --since, every day \
            from that one to today is checked, a line each: run it after restoring a backup, from the backup's day.
            """)

    @OptionGroup var settings: SettingsOptions

    @Option(
        name: .long,
        help: "The provider's day, YYYY-MM-DD (in the provider's own zone: Beijing for the Chinese wallets).")
    var date: String?

    @Option(
        name: .long,
        help: "Check every day from this one (YYYY-MM-DD, the backup's day after a restore) to today, a line each.")
    var since: String?

    /// The most days one `--since` checks.
    static let maxDays = 400

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
        switch (date, since) {
        case (let date?, nil):
            guard StatementDay(date) != nil else {
                throw ValidationError("--date must be a day as YYYY-MM-DD, not '\(date.prefix(32))'")
            }
        case (nil, let since?):
            guard StatementDay(since) != nil else {
                throw ValidationError("--since must be a day as YYYY-MM-DD, not '\(since.prefix(32))'")
            }
        default:
            throw ValidationError("give one of --date (one day) and --since (every day from it to today)")
        }
        for name in channel where Channel(rawValue: name) == nil {
            throw ValidationError(
                "--channel must be a channel (\(Channel.builtIn.map(\.rawValue).joined(separator: ", "))); not '\(name.prefix(32))'"
            )
        }
    }

    /// The days to check: `--date`, or `--since` through today in the Chinese wallets' zone (the latest of the
    /// providers' days; a day not published yet answers `waiting`).
    func days() throws -> [StatementDay] {
        if let date, let day = StatementDay(date) { return [day] }
        guard let since, var day = StatementDay(since) else { throw ValidationError("--since must be YYYY-MM-DD") }
        let today = StatementDay(containing: Date(), utcOffset: 8 * 3600)
        var days: [StatementDay] = []
        while !(today < day) {
            guard days.count < Self.maxDays else {
                throw ValidationError("--since reaches back over \(Self.maxDays) days: restore a newer backup")
            }
            days.append(day)
            day = day.next
        }
        return days
    }

    func run() async throws {
        let days = try days()
        let loaded = try await settings.load()
        loaded.server.logFormat.bootstrap(level: .warning)
        var flagged = false
        for day in days {
            let summary = try await check(day, settings: loaded)
            print(String(decoding: try OrderSafeJSON.encoder().encode(summary), as: UTF8.self))
            flagged = flagged || summary.flagged > 0
        }
        if flagged { throw ExitCode(3) }
    }

    private func check(_ day: StatementDay, settings loaded: Settings) async throws -> Summary {
        let interactive = isatty(STDERR_FILENO) != 0
        let reports = try await OrderSafeApplication.reconcileStatements(
            settings: loaded, day: day, channels: channel.compactMap(Channel.init(rawValue:)),
            logger: Logger(label: "ordersafe.statements")
        ) { channel, done, total in
            guard interactive, done == total || done % 500 == 0 else { return }
            let bar = "\r\(channel.rawValue) " + ProgressBar.line(done: done, total: total)
            FileHandle.standardError.write(Data((bar + (done == total ? "\n" : "")).utf8))
        }
        return Summary(
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
    }
}
