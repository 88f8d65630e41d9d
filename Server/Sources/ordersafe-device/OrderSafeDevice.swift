import ArgumentParser
import Foundation
import OrderSafeKit
import OrderSafeModel

/// An app on a simulated device: OrderSafeKit with StoreKitStandIn (the sandbox App Store's device queue) and
/// simulated Alipay and WeChat apps (the sandboxes' `pay` routes). Prints the SDK's events as JSON lines, then one
/// JSON object with the outcome(s).
@main
struct OrderSafeDevice: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ordersafe-device",
        abstract: "Plays an iOS app using OrderSafeKit against `ordersafe serve` in the sandbox.",
        subcommands: [Buy.self, Launch.self, Entitlements.self, PaywallCommand.self, SignOut.self])
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

    @Option(
        help:
            "Seconds an App Store order is kept for its transaction after a store error that may have followed the charge."
    )
    var storeWait: Int = 600

    @Option(help: "The longest wait, in seconds, before a transaction the server did not record is submitted again.")
    var retryCap: Int = 6 * 3600

    @Option(
        help:
            "This phone cannot verify the App Store transactions whose id is a multiple of this (StoreKit gives them as unverified)."
    )
    var unverifiableEvery: UInt64?

    func validate() throws {
        guard URL(string: server)?.host != nil else {
            throw ValidationError("--server must be a URL such as http://127.0.0.1:8080")
        }
        guard !user.isEmpty, user.count <= 128 else { throw ValidationError("--user must be 1 to 128 characters") }
        guard (1...3600).contains(confirmTimeout) else {
            throw ValidationError("--confirm-timeout must be 1 to 3600 seconds")
        }
        guard (0...86400).contains(storeWait) else { throw ValidationError("--store-wait must be 0 to 86400 seconds") }
        guard (1...86400).contains(retryCap) else { throw ValidationError("--retry-cap must be 1 to 86400 seconds") }
        guard (unverifiableEvery ?? 1) >= 1 else { throw ValidationError("--unverifiable-every must be at least 1") }
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

    @Flag(
        help: "Alipay / WeChat Pay: the payment app finishes, and the user comes back by the app switcher: no callback."
    )
    var returnsWithoutCallback = false

    @Flag(
        help:
            "App Store: the purchase is interrupted after the charge ('Confirmation required'): the app hears an error."
    )
    var interrupted = false

    @Flag(help: "App Store: parental controls forbid payments (AppStore.canMakePayments is false).")
    var paymentsNotAllowed = false

    @Flag(help: "App Store: the sheet answers userCancelled although the App Store charged (iOS 18).")
    var cancelledAfterCharge = false

    @Flag(help: "The Buy button is tapped twice at once: two purchases of the product start together.")
    var doubleTap = false

    @Option(help: "The user signs out this many seconds after the tap, while the purchase is on its way.")
    var signsOutAfter: Double?

    @Option(
        help:
            "Alipay / WeChat Pay: how the payment app's answer comes back: normal, none, late (after the app stopped waiting) or twice."
    )
    var callback: String = "normal"

    @OptionGroup var options: DeviceOptions

    func run() async throws {
        guard let channel = Channel(rawValue: channel) else {
            throw ValidationError("--channel must be appstore, alipay or wechatpay")
        }
        guard var answer = SimulatedPaymentApps.Callback(rawValue: callback) else {
            throw ValidationError("--callback must be normal, none, late or twice")
        }
        if returnsWithoutCallback { answer = .none }
        let device = try await DeviceSession.open(
            options,
            .init(
                confirms: !cancel, asksToBuy: askToBuy, killedAfterPayment: killedAfterPayment, callback: answer,
                store: StandInDevice.Unkindness(
                    paymentsNotAllowed: paymentsNotAllowed, interruptsPurchases: interrupted,
                    cancelsAfterCharge: cancelledAfterCharge)))
        if let signsOutAfter {
            Task {
                try await Task.sleep(for: .milliseconds(Int(max(0, signsOutAfter) * 1000)))
                await device.signOut()
                Output.line(["event": "signed_out_mid_purchase"])
            }
        }
        let (productID, safe) = (productID, device.safe)
        let second = doubleTap ? Task { await safe.purchase(productID, through: channel) } : nil
        let outcome = await device.safe.purchase(productID, through: channel)
        let tappedAgain = await second?.value
        await device.close()
        if let tappedAgain { Output.line(Output.outcome(tappedAgain)) }
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
        let device = try await DeviceSession.open(options, .init())
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
        Output.line([
            "settled": settled, "outcomes": outcomes.keys.sorted().compactMap { outcomes[$0] }.map(Output.outcome),
        ])
        if !settled { throw ExitCode(3) }
    }
}

struct Entitlements: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Prints what the app would show the user as their balances and entitlements (JSON), from the server or, offline, its cache, else the device's StoreKit entitlements (unconfirmed)."
    )

    @Option(help: "The user signed in on the app.")
    var user: String

    @Option(help: "The device's folder.")
    var state: String

    @Option(help: "The OrderSafe server (not needed with --offline).")
    var server: String?

    @Option(help: "The user's bearer token (default: one minted by the sandbox).")
    var token: String?

    @Flag(help: "No network: what the app shows offline (its cache, and only the signed-in user's).")
    var offline = false

    func run() async throws {
        guard offline || server.flatMap(URL.init(string:))?.host != nil else {
            throw ValidationError("--server is required unless --offline")
        }
        let base = URL(string: server ?? "http://offline.invalid/")!
        var bearer = token ?? ""
        if bearer.isEmpty, !offline { bearer = try await SandboxCalls(server: base).token(user: user) }
        let tokenValue = bearer
        let safe = OrderSafe(
            configuration: OrderSafeConfiguration(
                serverURL: base, token: { tokenValue }, userID: user,
                journalDirectory: URL(fileURLWithPath: state, isDirectory: true).appendingPathComponent(
                    "journal", isDirectory: true)),
            store: StoreKitClient(), transport: offline ? OfflineTransport() : URLSessionTransport())
        do {
            let shown = try await safe.shownEntitlements()
            let holdings = shown.holdings
            Output.line([
                "user": user, "shown_user": holdings.userID,
                "balances": Dictionary(uniqueKeysWithValues: holdings.balances.map { ($0.name, $0.amount) }),
                "entitlements": holdings.entitlements.map(\.name), "source": shown.source.rawValue,
                "confirmed": shown.isConfirmed,
            ])
        } catch {
            Output.line(["user": user, "shown_user": NSNull(), "error": "\(error)"])
        }
    }
}

struct SignOut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-out",
        abstract: "The user signs out: the app forgets their cached entitlements; purchases on their way stay.")

    @Option(help: "The device's folder.")
    var state: String

    func run() async throws {
        let safe = OrderSafe(
            configuration: OrderSafeConfiguration(
                serverURL: URL(string: "http://offline.invalid/")!,
                token: { throw URLError(.userAuthenticationRequired) }, userID: nil,
                journalDirectory: URL(fileURLWithPath: state, isDirectory: true).appendingPathComponent(
                    "journal", isDirectory: true)),
            store: StoreKitClient(), transport: OfflineTransport())
        await safe.logOut()
        Output.line(["signed_out": true])
    }
}
