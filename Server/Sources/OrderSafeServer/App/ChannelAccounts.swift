import OrderSafeModel

/// What a production server must have before it takes an order: an account for every channel its catalog sells
/// through. Without one, that channel's orders would be refused only when a user tries to pay.
enum ChannelAccounts {
    /// The setting that turns `channel`'s account on.
    static func key(of channel: Channel) -> String {
        ChannelRegistry.type(of: channel)?.accountKey ?? "\(channel.rawValue) (no channel of this name is registered)"
    }

    /// Throws naming the first channel (in ``Channel/allCases`` order) the catalog sells through without an account,
    /// with every such channel and the products that need it in the message.
    static func check(_ catalog: Catalog, configured: Set<Channel>) throws(SettingsError) {
        let missing = Channel.allCases.filter { !configured.contains($0) }.compactMap {
            channel -> (Channel, [String])? in
            let products = catalog.products.filter { $0.channels.contains(channel) }.map(\.id)
            return products.isEmpty ? nil : (channel, products)
        }
        guard let first = missing.first else { return }
        let lines = missing.map { channel, products in
            "\(key(of: channel)) is not set, yet the catalog sells \(products.prefix(3).map { "'\($0)'" }.joined(separator: ", "))"
                + (products.count > 3 ? " and \(products.count - 3) more" : "") + " through \(channel.rawValue)"
        }
        throw SettingsError(
            key: key(of: first.0),
            reason: "production needs an account for every channel the catalog sells through: "
                + lines.joined(separator: "; ")
                + ". Configure the account, or take the channel off those products in the catalog")
    }
}
