import ArgumentParser
import Foundation
import OrderSafeServer
import Sandbox

/// `ordersafe sandbox mint`: App Store transactions signed by the built-in App Store, for load tests.
struct SandboxMintCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mint",
        abstract:
            "Sign new App Store sandbox transactions in bulk for load tests, one JWS per line on standard output.",
        discussion: """
            Signed with the sandbox authority in the data folder, so `serve` on that folder verifies them; the sandbox \
            keeps no record of them (its Server API does not know them). Consumables, each with a transaction id of its own, \
            or with --subscription first purchases of a subscription, each a chain of its own.
            """)

    @OptionGroup var settings: SettingsOptions

    @Option(help: "How many transactions (1 to \(SandboxTransactionMinter.maxCount)).")
    var count: Int

    @Option(help: "The App Store product id, as the catalog names it (app_store_product_id).")
    var product: String

    @Flag(
        help: "First purchases of an auto-renewable subscription (30 days, each a chain of its own), not consumables.")
    var subscription = false

    @Option(
        help: ArgumentHelp(
            "A file of order UUIDs, one a line: the i-th transaction carries the i-th as its appAccountToken.",
            valueName: "file"))
    var accountTokens: String?

    func validate() throws {
        guard (1...SandboxTransactionMinter.maxCount).contains(count) else {
            throw ValidationError("--count must be 1 to \(SandboxTransactionMinter.maxCount)")
        }
        guard !product.isEmpty, product.utf8.count <= 255 else {
            throw ValidationError("--product must be 1 to 255 bytes")
        }
    }

    func run() async throws {
        let loaded = try await settings.load()
        let tokens = try accountTokens.map(Self.uuids(in:))
        let signed = try await SandboxProviders.appStoreMinter(settings: loaded.server).mint(
            productID: product, count: count, subscription: subscription, accountTokens: tokens, at: Date())
        var output = Data()
        output.reserveCapacity(1 << 20)
        for jws in signed {
            output.append(contentsOf: jws.utf8)
            output.append(0x0A)
            if output.count >= 1 << 20 {
                FileHandle.standardOutput.write(output)
                output.removeAll(keepingCapacity: true)
            }
        }
        FileHandle.standardOutput.write(output)
    }

    /// The UUIDs of `path`, one a line (``SandboxTransactionMinter/accountTokens(in:)``).
    static func uuids(in path: String) throws -> [UUID] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ValidationError("--account-tokens: cannot read \(path): \(error.localizedDescription)")
        }
        do {
            return try SandboxTransactionMinter.accountTokens(in: text)
        } catch {
            throw ValidationError("--account-tokens: \(path): \(error)")
        }
    }
}
