import Foundation
import Hummingbird
import Logging
import OrderSafeModel
import ServiceLifecycle

/// The built-in provider simulators `serve` runs in the sandbox when a channel has no real account, one per
/// registered channel, with their keys generated on first start and kept in the data folder.
public struct SandboxProviders: Sendable {
    /// Every registered channel's simulator, in ``ChannelRegistry`` order.
    let simulators: [(channel: Channel, simulator: any ChannelSimulator)]

    /// - Parameter timeScale: multiplies the providers' notification retry schedules (1/60 by default: Alipay's
    ///   first retry after 4 seconds instead of 4 minutes).
    init(settings: Settings.Server, clock: any WallClock = SystemClock(), timeScale: Double = 1.0 / 60, logger: Logger)
        throws
    {
        let setup = try SimulatorSetup(settings: settings, clock: clock, timeScale: timeScale, logger: logger)
        simulators = try ChannelRegistry.all.map { try $0.simulator(erased: setup) }
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
    func resume() async {
        for (_, simulator) in simulators { await simulator.resume() }
    }

    /// What the simulators run beside a listening server.
    func services(logger: Logger) async -> [any Service] {
        var services: [any Service] = []
        for (_, simulator) in simulators { services += await simulator.services(logger: logger) }
        return services
    }

    /// The simulators' routes under `/sandbox`; with `tokens`, `POST /sandbox/token` (`{"user": …}`) mints a user
    /// token the way a merchant's backend would, for `ordersafe-device` and other test clients.
    func addRoutes(
        to router: Router<OrderSafeRequestContext>, catalog: Catalog, tokens: DevelopmentTokenIssuer?,
        clock: any WallClock
    ) async {
        for (_, simulator) in simulators { await simulator.addRoutes(to: router, catalog: catalog) }
        if let tokens {
            router.post("sandbox/token") { request, context in
                let body = try await request.decodeJSON(SandboxTokenRequest.self, limit: 4096, context: context)
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
