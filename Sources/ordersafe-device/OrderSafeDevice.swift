import ArgumentParser
import Foundation
import OrderSafeKit
import OrderSafeModel
import StoreKitStandIn

/// An app on a simulated device: OrderSafeKit with StoreKitStandIn (the sandbox App Store's device queue) and
/// simulated Alipay and WeChat apps (the sandboxes' `pay` routes). Prints the SDK's events as JSON lines, then one
/// JSON object with the outcome(s).
@main
struct OrderSafeDevice: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ordersafe-device",
        abstract: "Plays an iOS app using OrderSafeKit against `ordersafe serve` in the sandbox.",
        subcommands: [Buy.self, Launch.self])
}

struct DeviceOptions: ParsableArguments {
    @Option(help: "The OrderSafe server, e.g. http://127.0.0.1:8080")
    var server: String

    @Option(help: "The signed-in user.")
    var user: String

    @Option(help: "The device's folder (its id and OrderSafeKit's journal); the same folder is the same device.")
    var state: String

    @Option(help: "The user's bearer token (default: one minted by the sandbox's POST /sandbox/token).")
    var token: String?

    @Option(help: "Seconds to wait for the server to confirm an Alipay or WeChat Pay payment.")
    var confirmTimeout: Int = 20

    func validate() throws {
        guard URL(string: server)?.host != nil else { throw ValidationError("--server must be a URL such as http://127.0.0.1:8080") }
        guard !user.isEmpty, user.count <= 128 else { throw ValidationError("--user must be 1 to 128 characters") }
        guard (1...3600).contains(confirmTimeout) else { throw ValidationError("--confirm-timeout must be 1 to 3600 seconds") }
    }
}

struct Buy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Buys one product, as a tap on a Buy button does.")

    @Argument(help: "The catalog product id.")
    var productID: String

    @Option(help: "appstore, alipay or wechatpay")
    var channel: String = "appstore"

    @Flag(help: "The user cancels on the purchase sheet or in the payment app.")
    var cancel = false

    @Flag(help: "Ask to Buy: the App Store purchase waits for a parent's approval.")
    var askToBuy = false

    @Flag(help: "The app is killed (SIGKILL) right after the store or the payment app took the money.")
    var killedAfterPayment = false

    @OptionGroup var options: DeviceOptions

    func run() async throws {
        guard let channel = Channel(rawValue: channel) else { throw ValidationError("--channel must be appstore, alipay or wechatpay") }
        let device = try await DeviceSession.open(options, confirms: !cancel, asksToBuy: askToBuy, killedAfterPayment: killedAfterPayment)
        let outcome = await device.safe.purchase(productID, through: channel)
        await device.close()
        Output.line(Output.outcome(outcome))
    }
}

struct Launch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Launches the app again: resumes every purchase on its way and waits until all are settled.")

    @Option(help: "Seconds to wait for everything to settle.")
    var wait: Int = 120

    @OptionGroup var options: DeviceOptions

    func run() async throws {
        let device = try await DeviceSession.open(options, confirms: true, asksToBuy: false, killedAfterPayment: false)
        let deadline = Date().addingTimeInterval(TimeInterval(wait))
        var settled = false
        await device.safe.start()
        while Date() < deadline {
            if await device.safe.isSettled() {
                settled = true
                break
            }
            try await Task.sleep(for: .milliseconds(500))
            await device.safe.resume()
        }
        let outcomes = await device.close()
        Output.line(["settled": settled, "outcomes": outcomes.keys.sorted().compactMap { outcomes[$0] }.map(Output.outcome)])
        if !settled { throw ExitCode(3) }
    }
}
