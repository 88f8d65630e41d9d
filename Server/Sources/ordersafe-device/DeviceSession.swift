import ArgumentParser
import Foundation
import OrderSafeKit
import OrderSafeModel
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One run of the app: the device connected, OrderSafeKit configured, its events printed as they come.
struct DeviceSession {
    let safe: OrderSafe
    /// The signed-in user's token; nil once they signed out (the app's token provider then throws, as a real app's).
    let token: SignedInToken
    /// Prints the events and returns the outcomes they carried, by order (the last one of each).
    let printer: Task<[String: PurchaseOutcome], Never>

    /// What the device's stores and payment apps do this run.
    struct Behaviour {
        var confirms = true
        var asksToBuy = false
        var killedAfterPayment = false
        var callback = SimulatedPaymentApps.Callback.normal
        var store = StandInDevice.Unkindness()
        /// Each event a JSON line as it comes (off: the command prints one answer only).
        var printsEvents = true
    }

    static func open(_ options: DeviceOptions, _ behaviour: Behaviour) async throws -> DeviceSession {
        let (confirms, asksToBuy, killedAfterPayment) = (
            behaviour.confirms, behaviour.asksToBuy, behaviour.killedAfterPayment
        )
        let state = URL(fileURLWithPath: options.state, isDirectory: true)
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let server = URL(string: options.server)!
        var unkindness = behaviour.store
        if let every = options.unverifiableEvery {
            unkindness.transactionVerificationFailure = { $0 % every == 0 ? .invalidSignature : nil }
        }
        StandInDevice.connect(
            StandInDevice(
                server: server, deviceID: try deviceID(in: state), confirmsPurchases: confirms, asksToBuy: asksToBuy,
                killedAfterCharge: killedAfterPayment, unkindness: unkindness))
        var token = options.token ?? ""
        if token.isEmpty { token = try await SandboxCalls(server: server).token(user: options.user) }
        let signedIn = SignedInToken(token)
        var vendors = SimulatedPaymentApps(server: server, confirms: confirms)
        vendors.killedAfterPayment = killedAfterPayment
        vendors.callback = behaviour.callback
        let configuration = OrderSafeConfiguration(
            serverURL: server,
            token: {
                guard let bearer = signedIn.current else { throw SignedOut() }
                return bearer
            }, userID: options.user,
            journalDirectory: state.appendingPathComponent("journal", isDirectory: true),
            alipay: vendors, wechatPay: vendors,
            confirmation: ConfirmationPolicy(
                timeout: TimeInterval(options.confirmTimeout), storeMayStillDeliver: TimeInterval(options.storeWait),
                notRecordedRetryCap: TimeInterval(options.retryCap)),
            log: { record in
                Output.line(["log": record.message, "level": record.level.rawValue, "metadata": record.metadata])
            })
        let safe = OrderSafe(configuration: configuration)
        let events = safe.events()
        let printsEvents = behaviour.printsEvents
        let printer = Task {
            var outcomes: [String: PurchaseOutcome] = [:]
            for await event in events {
                if printsEvents { Output.line(Output.event(event)) }
                if case .purchaseOutcome(let outcome) = event, let orderNo = outcome.orderNo {
                    outcomes[orderNo] = outcome
                }
            }
            return outcomes
        }
        return DeviceSession(safe: safe, token: signedIn, printer: printer)
    }

    /// The user signs out: the app's token provider gives nothing from now on, and OrderSafeKit is told.
    func signOut() async {
        token.signOut()
        await safe.logOut()
    }

    struct SignedOut: Error {}

    /// The app's session: its user's token until they sign out.
    final class SignedInToken: Sendable {
        private let token: Mutex<String?>
        init(_ token: String) { self.token = Mutex(token) }
        var current: String? { token.withLock { $0 } }
        func signOut() { token.withLock { $0 = nil } }
    }

    /// Lets the last events print, then stops; returns the outcomes the events carried.
    @discardableResult
    func close() async -> [String: PurchaseOutcome] {
        try? await Task.sleep(for: .milliseconds(50))
        await safe.stop()
        return await printer.value
    }

    /// The device's id, made once and kept in its folder.
    static func deviceID(in state: URL) throws -> String {
        let file = state.appendingPathComponent("device-id")
        if let text = try? String(contentsOf: file, encoding: .utf8), !text.isEmpty {
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let id = UUID().uuidString.lowercased()
        try Data(id.utf8).write(to: file, options: .atomic)
        return id
    }
}

/// No network at all (airplane mode): every call fails as URLSession's do offline.
struct OfflineTransport: HTTPTransport {
    func send(_ request: URLRequest) async throws -> (status: Int, body: Data) {
        throw URLError(.notConnectedToInternet)
    }
}

/// The sandbox's own routes the device uses besides StoreKit's.
struct SandboxCalls {
    let server: URL

    func token(user: String) async throws -> String {
        let answer = try await post("sandbox/token", body: try JSONSerialization.data(withJSONObject: ["user": user]))
        guard let token = answer["token"] as? String else {
            throw ValidationError("the server minted no token: is it in the sandbox?")
        }
        return token
    }

    func post(_ path: String, body: Data) async throws -> [String: Any] {
        var request = URLRequest(url: server.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (data, _) = try await URLSession.shared.data(for: request)
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }
}
