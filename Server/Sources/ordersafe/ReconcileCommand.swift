import ArgumentParser
import Engine
import Foundation
import Logging
import OrderSafeServer

struct ReconcileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Run one reconciliation pass by hand: every job due now (provider queries, closes), then exit.",
        subcommands: [StatementsCommand.self])

    @OptionGroup var settings: SettingsOptions

    func run() async throws {
        let loaded = try await settings.load()
        loaded.server.logFormat.bootstrap(level: .warning)
        let interactive = isatty(STDOUT_FILENO) != 0
        let (tally, later) = try await OrderSafeApplication.reconcileOnce(
            settings: loaded, logger: Logger(label: "ordersafe.reconcile")
        ) {
            done, due in
            guard interactive else { return }
            FileHandle.standardOutput.write(Data(("\r" + ProgressBar.line(done: done, total: max(due, done))).utf8))
        }
        if interactive { print("") }
        print(
            "reconcile: \(tally.done) done, \(tally.rescheduled) rescheduled, \(tally.fencedOff) taken over by another worker; \(later) waiting for later"
        )
    }
}

/// `[#########-----------]  45/100`
enum ProgressBar {
    static func line(done: Int, total: Int, width: Int = 30) -> String {
        let filled = total == 0 ? width : min(width, done * width / total)
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            + "] \(done)/\(total)"
    }
}
