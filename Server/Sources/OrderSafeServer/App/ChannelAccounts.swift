import OrderSafeModel

/// What a server checks of its catalog's channels before it takes an order: each is one the server is built with,
/// and — in production — has an account. Without one, that channel's orders would be refused only when a user tries
/// to pay.
enum ChannelAccounts {
    /// The setting that turns `channel`'s account on.
    static func key(of channel: Channel, in registry: ChannelRegistry) -> String {
        registry.type(of: channel)?.accountKey ?? "\(channel.rawValue) (no channel of this name is registered)"
    }

    /// Throws naming the first channel (in `registry` order) the catalog sells through
    /// without an account, with every such channel and the products that need it in the message.
    static func check(_ catalog: Catalog, configured: Set<Channel>, registry: ChannelRegistry) throws(SettingsError) {
        let missing = registry.channels.filter { !configured.contains($0) }.compactMap {
            channel -> (Channel, [String])? in
            let products = catalog.products.filter { $0.channels.contains(channel) }.map(\.id)
            return products.isEmpty ? nil : (channel, products)
        }
        guard let first = missing.first else { return }
        let lines = missing.map { channel, products in
            "\(key(of: channel, in: registry)) is not set, yet the catalog sells \(listed(products)) through \(channel.rawValue)"
        }
        throw SettingsError(
            key: key(of: first.0, in: registry),
            reason: "production needs an account for every channel the catalog sells through: "
                + lines.joined(separator: "; ")
                + ". Configure the account, or take the channel off those products in the catalog")
    }

    /// Throws naming the catalog's channels no folder of this server implements (a misspelt name: `wechat`), with
    /// the products that name them.
    static func checkRegistered(_ catalog: Catalog, registry: ChannelRegistry) throws(SettingsError) {
        var unknown: [Channel: [String]] = [:]
        for product in catalog.products {
            for channel in Set(product.channels).union(product.prices.keys) where registry.type(of: channel) == nil {
                unknown[channel, default: []].append(product.id)
            }
        }
        guard !unknown.isEmpty else { return }
        let lines = unknown.sorted { $0.key.rawValue < $1.key.rawValue }.map { channel, products in
            "'\(channel.rawValue)' (\(listed(products.sorted())))"
        }
        throw SettingsError(
            key: "catalog.file",
            reason: "the catalog sells through channels this server does not have: \(lines.joined(separator: "; "))"
                + " — the channels are \(registry.names)")
    }

    private static func listed(_ products: [String]) -> String {
        products.prefix(3).map { "'\($0)'" }.joined(separator: ", ")
            + (products.count > 3 ? " and \(products.count - 3) more" : "")
    }
}
