import Foundation
import OrderSafeModel

/// The last balances and entitlements the server gave the signed-in user, on disk, for reads while offline. They
/// are served to that user only (the file names whose they are), and removed when the user signs out.
actor EntitlementCache {
    private let file: URL
    private var current: HoldingsResponse?

    init(file: URL) {
        self.file = file
    }

    /// Keeps `holdings`; returns whether they differ from the ones kept before.
    func store(_ holdings: HoldingsResponse) -> Bool {
        let previous = load(for: holdings.userID)
        current = holdings
        guard previous != holdings, let data = try? OrderSafeJSON.encoder().encode(holdings) else {
            return previous != holdings
        }
        let disk = LocalFileSystem()
        try? disk.createFolder(file.deletingLastPathComponent())
        try? disk.writeDurably(data, to: file)
        return true
    }

    /// What was kept for `userID`; nil when nothing was, or what was kept is another user's.
    func load(for userID: String) -> HoldingsResponse? {
        if current == nil, let data = try? Data(contentsOf: file), data.count <= 256 * 1024 {
            current = try? OrderSafeJSON.decoder().decode(HoldingsResponse.self, from: data)
        }
        return current?.userID == userID ? current : nil
    }

    /// Forgets what was kept, in memory and on disk (sign-out).
    func clear() {
        current = nil
        try? LocalFileSystem().remove(file)
    }
}
