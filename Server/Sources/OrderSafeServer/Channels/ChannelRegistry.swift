import OrderSafeModel

/// Every payment channel the server knows, in the order checks and the console list them. A channel is added by
/// its folder under `Channels/` and one line here; nothing else in the server names channels (a test holds every
/// module to that: `ChannelRegistryTests`).
enum ChannelRegistry {
    static let all: [any PaymentChannel.Type] = [
        AppStoreChannel.self,
        AlipayChannel.self,
        WeChatPayChannel.self,
    ]

    /// The registered type of `channel`; nil only for a channel the wire knows and no folder implements.
    static func type(of channel: Channel) -> (any PaymentChannel.Type)? {
        all.first { $0.channel == channel }
    }
}

extension PaymentChannel {
    /// Reads this channel's settings section into `settings`, when its account is set.
    static func read(from reader: SettingsReader, into settings: inout Settings) throws {
        if let account = try account(from: reader) { settings.channels[channel] = account }
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
