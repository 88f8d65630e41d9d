import OrderSafeModel

/// The payment channels a server is built with, in the order checks and the console list them. A channel is added
/// by its folder under `Channels/` and one line in ``builtIn``; nothing else in the server names channels (a test
/// holds every module to that: `ChannelRegistryTests`). A server runs the registry its settings carry
/// (``Settings/registry``): ``builtIn``, or — for a channel built outside this module, as the tests' toy channel
/// is — ``builtIn`` with that channel ``adding(_:)``.
struct ChannelRegistry: Sendable {
    let all: [any PaymentChannel.Type]

    static let builtIn = ChannelRegistry(all: [
        AppStoreChannel.self,
        AlipayChannel.self,
        WeChatPayChannel.self,
    ])

    /// The registered type of `channel`; nil for a channel name no folder implements.
    func type(of channel: Channel) -> (any PaymentChannel.Type)? {
        all.first { $0.channel == channel }
    }

    /// The registered channels' names, in order.
    var channels: [Channel] { all.map { $0.channel } }

    /// This registry with `type` registered after its channels; a name registered already is refused.
    func adding(_ type: any PaymentChannel.Type) throws(SettingsError) -> ChannelRegistry {
        guard self.type(of: type.channel) == nil else {
            throw SettingsError(
                key: type.accountKey, reason: "channel '\(type.channel.rawValue)' is registered already")
        }
        return ChannelRegistry(all: all + [type])
    }

    /// The registered channels' names as a sentence's list (`appstore, alipay, wechatpay`).
    var names: String { channels.map(\.rawValue).joined(separator: ", ") }
}

extension PaymentChannel {
    /// Reads this channel's settings section into `settings`, when its account is set.
    static func read(from reader: SettingsReader, into settings: inout Settings) throws {
        if let account = try account(from: reader) { settings.channels[channel] = account }
        if let simulated = try simulatorSettings(from: reader) {
            settings.server.simulatorSettings[channel] = simulated
        }
    }

    /// Starts the channel over `settings`' account, else over `sandbox`'s simulator; nil when it has neither.
    static func start(settings: Settings, sandbox: SandboxProviders?, wiring: ChannelWiring) async throws -> Self? {
        if let account = settings.channels[channel] as? Account {
            return try await start(account: account, transport: networkTransport(), simulated: false, wiring: wiring)
        }
        guard let simulator = sandbox?.simulator(of: channel) as? Simulator else { return nil }
        return try await start(
            account: simulator.account, transport: sandbox?.unavailableTransport(of: channel) ?? simulator.transport,
            simulated: true, wiring: wiring)
    }

    /// The channel's simulator, as ``SandboxProviders`` keeps it.
    static func simulator(erased setup: SimulatorSetup) throws -> (Channel, any ChannelSimulator) {
        (channel, try Simulator(setup))
    }
}
