/// Which connections a server keeps open, per client address and in all: when a new one would pass either cap, the
/// connection idle the longest (between requests, or still waiting for its first) makes room for it, within its
/// address for the address's cap and among all for the total; a connection with a request in progress is never
/// taken. When every candidate is busy, the new connection is refused. Idle connections cost their clients only a
/// reconnect, so a client that opens hundreds of them takes room from itself, not from a health probe or another
/// client.
struct ConnectionBook<ID: Hashable & Sendable>: Sendable {
    /// Open connections one address may hold; 0: no per-address cap.
    let perAddress: Int
    /// Open connections in all.
    let total: Int

    struct Entry: Sendable {
        var address: String
        var busy = false
        /// When the connection last became idle, in the book's own order of events.
        var idleSince: UInt64
    }

    private(set) var entries: [ID: Entry] = [:]
    private var byAddress: [String: Set<ID>] = [:]
    private var tick: UInt64 = 0

    init(perAddress: Int, total: Int) {
        self.perAddress = perAddress
        self.total = max(total, 1)
    }

    enum Admission: Equatable, Sendable {
        /// Keep the new connection, after closing these.
        case admitted(closing: [ID])
        /// Close the new connection at once.
        case refused
    }

    /// A new connection from `address`.
    mutating func open(_ id: ID, address: String) -> Admission {
        var closing: [ID] = []
        if perAddress > 0, let mine = byAddress[address], mine.count >= perAddress {
            guard let oldest = longestIdle(among: mine) else { return .refused }
            closing.append(oldest)
        }
        if entries.count - closing.count >= total {
            guard let oldest = longestIdle(among: entries.keys.filter { !closing.contains($0) }) else {
                return .refused
            }
            closing.append(oldest)
        }
        for id in closing { close(id) }
        tick &+= 1
        entries[id] = Entry(address: address, idleSince: tick)
        byAddress[address, default: []].insert(id)
        return .admitted(closing: closing)
    }

    /// A request head arrived: the connection is busy until its response ends.
    mutating func busy(_ id: ID) {
        // An entry is read and written back whole: changed through `entries[id]?`, the dictionary's modify accessor
        // allocated its coroutine's frame, two `malloc`s a change and six a request.
        guard var entry = entries[id] else { return }
        entry.busy = true
        entries[id] = entry
    }

    /// A response ended: the connection waits for its next request.
    mutating func idle(_ id: ID) {
        guard var entry = entries[id] else { return }
        tick &+= 1
        entry.busy = false
        entry.idleSince = tick
        entries[id] = entry
    }

    /// The connection closed (or was closed).
    mutating func close(_ id: ID) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        byAddress[entry.address]?.remove(id)
        if byAddress[entry.address]?.isEmpty == true { byAddress[entry.address] = nil }
    }

    /// Open connections from `address`.
    func count(from address: String) -> Int { byAddress[address]?.count ?? 0 }

    private func longestIdle(among ids: some Sequence<ID>) -> ID? {
        var best: (id: ID, since: UInt64)?
        for id in ids {
            guard let entry = entries[id], !entry.busy else { continue }
            if best == nil || entry.idleSince < best!.since { best = (id, entry.idleSince) }
        }
        return best?.id
    }
}
