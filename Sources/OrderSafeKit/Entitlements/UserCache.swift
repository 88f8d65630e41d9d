import Foundation
import OrderSafeModel

/// An answer of the server that belongs to one user: the user's holdings, the user's subscriptions.
protocol UserOwned: Codable, Hashable, Sendable {
    var userID: String { get }
}

extension HoldingsResponse: UserOwned {}
extension SubscriptionsResponse: UserOwned {}

/// The last `Value` the server gave the signed-in user, on disk, for reads while offline. It is served to that user
/// only (the file names whose it is), and removed when the user signs out.
actor UserCache<Value: UserOwned> {
    private let file: URL
    private var current: Value?

    init(file: URL) {
        self.file = file
    }

    /// Keeps `value`; returns whether it differs from the one kept before.
    func store(_ value: Value) -> Bool {
        let previous = load(for: value.userID)
        current = value
        guard previous != value, let data = try? OrderSafeJSON.encoder().encode(value) else {
            return previous != value
        }
        let disk = LocalFileSystem()
        try? disk.createFolder(file.deletingLastPathComponent())
        try? disk.writeDurably(data, to: file)
        return true
    }

    /// What was kept for `userID`; nil when nothing was, or what was kept is another user's.
    func load(for userID: String) -> Value? {
        if current == nil, let data = try? Data(contentsOf: file), data.count <= 256 * 1024 {
            current = try? OrderSafeJSON.decoder().decode(Value.self, from: data)
        }
        return current?.userID == userID ? current : nil
    }

    /// Forgets what was kept, in memory and on disk (sign-out).
    func clear() {
        current = nil
        try? LocalFileSystem().remove(file)
    }
}
