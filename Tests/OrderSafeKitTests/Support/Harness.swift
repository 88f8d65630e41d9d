import Foundation
import OrderSafeModel
import Synchronization

@testable import OrderSafeKit

/// One app on one device: a journal folder, the fakes, and an OrderSafe over them. ``relaunch()`` is a new
/// process on the same device (same folder, same store queue, same server).
struct Harness {
    let folder: URL
    let store: FakeStore
    let server: FakeServer
    let crash: CrashPoints
    var vendors: FakeVendorApps
    var user = "user-1"

    init(crashAt: Int? = nil) {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orderSafeKit-\(UUID().uuidString)", isDirectory: true)
        crash = CrashPoints(crashAt: crashAt)
        store = FakeStore(crash: crash)
        server = FakeServer(crash: crash)
        vendors = FakeVendorApps(server: server, crash: crash)
    }

    func app(crash: CrashPoints? = nil, now: (@Sendable () -> Date)? = nil) -> OrderSafe {
        let user = user
        var configuration = OrderSafeConfiguration(
            serverURL: URL(string: "https://pay.example.com/")!, token: { user }, userID: user,
            journalDirectory: folder, alipay: vendors, wechatPay: vendors,
            confirmation: ConfirmationPolicy(
                firstDelay: 0.001, maxDelay: 0.002, timeout: 0.02))
        configuration.sleep = { _ in await Task.yield() }
        if let now { configuration.now = now }
        return OrderSafe(configuration: configuration, store: store, transport: server)
    }

    /// An app whose signed-in user is `userID` while the app's token provider gives another user's token (an app that
    /// forgot to switch tokens at sign-in).
    func app(signedIn userID: String, tokenOf tokenUser: String) -> OrderSafe {
        var configuration = OrderSafeConfiguration(
            serverURL: URL(string: "https://pay.example.com/")!, token: { tokenUser }, userID: userID,
            journalDirectory: folder)
        configuration.sleep = { _ in await Task.yield() }
        return OrderSafe(configuration: configuration, store: store, transport: server)
    }

    /// Who the app's sign-in says is signed in, changed by a test while calls are on their way.
    final class SignedIn: Sendable {
        private let user: Mutex<String>
        init(_ user: String) { self.user = Mutex(user) }
        var now: String { user.withLock { $0 } }
        func change(to other: String) { user.withLock { $0 = other } }
    }

    /// An app whose token provider gives the token of whoever `signedIn` names at the moment it is asked (an app
    /// that switches tokens at sign-in, as it should).
    func app(switching signedIn: SignedIn) -> OrderSafe {
        var configuration = OrderSafeConfiguration(
            serverURL: URL(string: "https://pay.example.com/")!, token: { signedIn.now }, userID: signedIn.now,
            journalDirectory: folder)
        configuration.sleep = { _ in await Task.yield() }
        return OrderSafe(configuration: configuration, store: store, transport: server)
    }

    /// The journal files on disk.
    var journalFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".json") }
    }

    /// The stages of the journal's entries on disk, in no particular order.
    var journalStages: [JournalEntry.Stage] {
        struct Staged: Decodable { var stage: JournalEntry.Stage }
        return journalFiles.compactMap { file in
            try? JSONDecoder().decode(Staged.self, from: Data(contentsOf: folder.appendingPathComponent(file))).stage
        }
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: folder)
    }
}
