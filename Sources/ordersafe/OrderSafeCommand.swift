import ArgumentParser

@main
struct OrderSafeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ordersafe",
        abstract: "In-app payments for iOS apps that never lose an order.",
        subcommands: [ServeCommand.self, MigrateCommand.self, TokenCommand.self])
}
