import ChannelSupport
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import OrderSafeModel
import ServiceLifecycle

/// The built-in provider simulators `serve` runs in the sandbox when a channel has no real account, one per
/// registered channel, with their keys generated on first start and kept in the data folder.
public struct SandboxProviders: Sendable {
    /// Every registered channel's simulator, in ``ChannelRegistry`` order.
    let simulators: [(channel: Channel, simulator: any ChannelSimulator)]
    /// The simulators that could not load what they kept (a journal unreadable, damaged or too large), and why: each
    /// started empty, and refuses every request saying why, while the server and the other channels serve.
    let unavailable: [Channel: String]

    /// - Parameter timeScale: multiplies the providers' notification retry schedules (1/60 by default: Alipay's
    ///   first retry after 4 seconds instead of 4 minutes).
    /// - Parameter registry: the channels whose simulators to start.
    init(
        settings: Settings.Server, registry: ChannelRegistry = .builtIn, clock: any WallClock = SystemClock(),
        timeScale: Double = 1.0 / 60, logger: Logger
    ) throws {
        let setup = try SimulatorSetup(settings: settings, clock: clock, timeScale: timeScale, logger: logger)
        var simulators: [(channel: Channel, simulator: any ChannelSimulator)] = []
        var unavailable: [Channel: String] = [:]
        for type in registry.all {
            do {
                simulators.append(try type.simulator(erased: setup))
            } catch {
                // Its keys load but its record does not: never run it on a partial record (a provider that forgot
                // payments would contradict the ledger), never stop the server for it either.
                guard let empty = try? type.simulator(erased: setup.withoutJournals) else { throw error }
                logger.error(
                    "a built-in provider cannot load what it kept and refuses every request until it can",
                    metadata: ["channel": "\(empty.0.rawValue)", "error": "\(error)"])
                simulators.append(empty)
                unavailable[empty.0] = "\(error)"
            }
        }
        self.simulators = simulators
        self.unavailable = unavailable
    }

    /// What the server's channel calls in place of the simulator of `channel`: nil when it is available.
    func unavailableTransport(of channel: Channel) -> (any ProviderTransport)? {
        unavailable[channel].map { UnavailableSimulatorTransport(channel: channel, reason: $0) }
    }

    /// The simulator of `channel`.
    func simulator(of channel: Channel) -> (any ChannelSimulator)? {
        simulators.first { $0.channel == channel }?.simulator
    }

    /// The simulator of type `type` (every registered channel has one).
    func simulator<S: ChannelSimulator>(_ type: S.Type) -> S {
        guard let found = simulators.lazy.compactMap({ $0.simulator as? S }).first else {
            preconditionFailure("every registered channel has a simulator; \(S.self) is not registered")
        }
        return found
    }

    /// Picks up where the simulators were when a server last stopped on this data folder, as the real providers
    /// would have: the server answers what they send once it listens; the providers' retry schedules cover the wait.
    /// Idempotent.
    func resume() async throws {
        for (channel, simulator) in simulators where unavailable[channel] == nil { try await simulator.resume() }
    }

    /// What the simulators run beside a listening server.
    func services(logger: Logger) async -> [any Service] {
        var services: [any Service] = []
        for (channel, simulator) in simulators where unavailable[channel] == nil {
            services += await simulator.services(logger: logger)
        }
        return services
    }

    /// The simulators' routes under `/sandbox`; with `tokens`, `POST /sandbox/token` (`{"user": …}`) mints a user
    /// token the way a merchant's backend would, for `ordersafe-device` and other test clients.
    func addRoutes(
        to router: Router<OrderSafeRequestContext>, catalog: Catalog, tokens: DevelopmentTokenIssuer?,
        clock: any WallClock
    ) async {
        for (channel, simulator) in simulators {
            guard let reason = unavailable[channel] else {
                await simulator.addRoutes(to: router, catalog: catalog)
                continue
            }
            let refusal: @Sendable (Request, OrderSafeRequestContext) async throws -> Response = { _, _ in
                throw APIError(
                    status: .serviceUnavailable, code: "sandbox_unavailable",
                    message: UnavailableSimulatorTransport(channel: channel, reason: reason).description)
            }
            for method in [HTTPRequest.Method.get, .post] {
                router.on("sandbox/\(channel.rawValue)/**", method: method, use: refusal)
            }
        }
        if let tokens {
            router.post("sandbox/token") { request, context in
                let body = try await request.decodeJSON(SandboxTokenRequest.self, limit: 4096)
                guard !body.user.isEmpty, body.user.count <= 128 else {
                    throw APIError(
                        status: .badRequest, code: "invalid_request", message: "user must be 1 to 128 characters")
                }
                return try Response.json([
                    "token": try await tokens.token(userID: body.user, now: clock.now(), lifetime: 3600)
                ])
            }
        }
    }
}

/// Body of `POST /sandbox/token`.
struct SandboxTokenRequest: APIRequestBody {
    static let members: Set<String> = ["user"]
    var user: String
}

/// Stands in for a simulator that could not load what it kept: every call fails, saying why, as a provider that
/// cannot be reached.
struct UnavailableSimulatorTransport: ProviderTransport, CustomStringConvertible, Error {
    let channel: Channel
    let reason: String

    var description: String {
        "the built-in \(channel.rawValue) cannot load what it kept (\(reason)); move the file named away, or "
            + "start on a fresh data folder, to use it again"
    }

    func send(method: String, url: String, headers: [String: String], body: [UInt8], timeout: Duration) async throws
        -> ProviderHTTPResponse
    {
        throw self
    }
}
