import ArgumentParser
import Foundation

@main
struct OrderSafeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ordersafe",
        abstract: "In-app payments for iOS apps that never lose an order.",
        subcommands: [
            ServeCommand.self, MigrateCommand.self, ReconcileCommand.self, DemoCommand.self, TokenCommand.self,
            AppStoreCommand.self, SandboxCommand.self, BackupCommand.self, RestoreCommand.self,
        ])

    /// As `AsyncParsableCommand.main()`, but usage errors exit with 2 (the interface DESIGN.md promises), not 64.
    static func main() async {
        do {
            let (arguments, files) = AppStoreVerifyCommand.setAside(Array(CommandLine.arguments.dropFirst()))
            var command = try parseAsRoot(arguments)
            if var verify = command as? AppStoreVerifyCommand {
                verify.files += files
                command = verify
            }
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
