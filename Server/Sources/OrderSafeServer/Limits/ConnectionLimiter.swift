import NIOCore
import Synchronization

/// The server's ``ConnectionBook``, shared by every connection's ``ConnectionStateHandler``: it closes the
/// connections the book gives up.
final class ConnectionLimiter: Sendable {
    private let state: Mutex<(book: ConnectionBook<ObjectIdentifier>, channels: [ObjectIdentifier: any Channel])>

    /// - Parameters:
    ///   - perAddress: connections one client address (an IPv6 client's /64) may hold; 0: no per-address cap.
    ///   - total: connections in all.
    init(perAddress: Int, total: Int) {
        state = Mutex((ConnectionBook(perAddress: perAddress, total: total), [:]))
    }

    /// Registers a new connection; false when it must be closed at once.
    func open(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        let address = channel.remoteAddress.map(Self.key) ?? "unknown"
        let (admitted, closing) = state.withLock { state -> (Bool, [any Channel]) in
            guard case .admitted(let ids) = state.book.open(id, address: address) else { return (false, []) }
            state.channels[id] = channel
            return (true, ids.compactMap { state.channels.removeValue(forKey: $0) })
        }
        for other in closing { other.close(promise: nil) }
        return admitted
    }

    func busy(_ channel: any Channel) {
        state.withLock { $0.book.busy(ObjectIdentifier(channel)) }
    }

    func idle(_ channel: any Channel) {
        state.withLock { $0.book.idle(ObjectIdentifier(channel)) }
    }

    func closed(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { state in
            state.book.close(id)
            state.channels[id] = nil
        }
    }

    /// The address a connection counts against: an IPv4 address, or an IPv6 client's /64 (one subscriber's
    /// prefix: a single client may use every address in it).
    static func key(_ address: SocketAddress) -> String {
        if case .v6(let v6) = address {
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0.prefix(8)) }
            if bytes.prefix(6) != [0, 0, 0, 0, 0, 0] {
                return stride(from: 0, to: 8, by: 2).map {
                    String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
                }
                .joined(separator: ":") + "::/64"
            }
        }
        return address.ipAddress ?? "unknown"
    }
}
