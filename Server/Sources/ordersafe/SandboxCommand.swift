import ArgumentParser

/// `ordersafe sandbox …`: tools for the built-in provider simulators.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox", abstract: "Tools for the built-in provider sandboxes.",
        subcommands: [SandboxMintCommand.self])
}
