import Foundation
import OrderSafeModel

/// The last balances and entitlements the server gave, on disk, for reads while offline.
actor EntitlementCache {
    private let file: URL
    private var current: HoldingsResponse?

    init(file: URL) {
        self.file = file
    }

    /// Keeps `holdings`; returns whether they differ from the ones kept before.
    func store(_ holdings: HoldingsResponse) -> Bool {
        let previous = load()
        current = holdings
        guard previous != holdings, let data = try? OrderSafeJSON.encoder().encode(holdings) else { return previous != holdings }
        let disk = LocalFileSystem()
        try? disk.createFolder(file.deletingLastPathComponent())
        try? disk.writeDurably(data, to: file)
        return true
    }

    func load() -> HoldingsResponse? {
        if let current { return current }
        guard let data = try? Data(contentsOf: file), data.count <= 256 * 1024 else { return nil }
        current = try? OrderSafeJSON.decoder().decode(HoldingsResponse.self, from: data)
        return current
    }
}
