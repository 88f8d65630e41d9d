import Foundation

/// Numbered points where a test can kill the app: each fake counts the steps it takes, and at the chosen one the
/// call never returns, so nothing the SDK would do after it happens (as with a SIGKILL); the state on disk and on
/// the fake server is what a relaunch finds.
actor CrashPoints {
    private(set) var steps: [String] = []
    private let crashAt: Int?
    private(set) var crashed: String?

    init(crashAt: Int? = nil) {
        self.crashAt = crashAt
    }

    func step(_ name: String) async {
        steps.append(name)
        guard steps.count - 1 == crashAt else { return }
        crashed = name
        // Never resumed: the task is frozen here, like a killed process.
        await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
    }
}
