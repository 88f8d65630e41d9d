import Engine
import OrderSafeModel

/// The channels a server takes payments through (each over the merchant's account, or its simulator in the
/// sandbox), in ``ChannelRegistry`` order, and what the shared services take from them.
struct RunningChannels: Sendable {
    let all: [any PaymentChannel]
    /// The channels the server is built with, running or not.
    let registry: ChannelRegistry

    /// Starts every channel of `settings`' registry that has an account, or a simulator in `sandbox`.
    static func start(settings: Settings, sandbox: SandboxProviders?, wiring: ChannelWiring) async throws
        -> RunningChannels
    {
        var all: [any PaymentChannel] = []
        for type in settings.registry.all {
            if let channel = try await type.start(settings: settings, sandbox: sandbox, wiring: wiring) {
                all.append(channel)
            }
        }
        return RunningChannels(all: all, registry: settings.registry)
    }

    /// The running channel of `channel`, if any.
    subscript(channel: Channel) -> (any PaymentChannel)? {
        all.first { type(of: $0).channel == channel }
    }

    /// The running channel of type `type`, if any.
    func running<C: PaymentChannel>(_ type: C.Type) -> C? {
        all.lazy.compactMap { $0 as? C }.first
    }

    var names: Set<Channel> { Set(all.map { type(of: $0).channel }) }
    var settlers: [Channel: any OrderSettler] { collect(\.settler) }
    var refunders: [Channel: any OrderRefunder] { collect(\.refunder) }
    var replayers: [Channel: any NotificationReplayer] { collect(\.replayer) }
    var heldReplayers: [Channel: any HeldSignalReplayer] { collect(\.heldReplayer) }
    var chores: [any ChannelChore] { all.flatMap(\.chores) }
    var tasks: [any ChannelTask] { all.flatMap(\.tasks) }
    var statements: [Channel: any StatementSource] { collect(\.statements) }

    private func collect<Value>(_ part: (any PaymentChannel) -> Value?) -> [Channel: Value] {
        var found: [Channel: Value] = [:]
        for channel in all { found[type(of: channel).channel] = part(channel) }
        return found
    }
}
