import Foundation
import Synchronization

@testable import OrderSafeKit

/// A disk in memory that a test can crash in the middle of a journal write, the way a phone's disk behaves:
/// - a **kill** (the app is SIGKILLed): what was written stays; the write in progress is cut short;
/// - a **power loss** (the phone dies): a file's data never synced is gone, and so is every change to a folder's
///   names (a creation, a rename) since the folder was last synced. Truncating a file is a change of its size that
///   the disk keeps at once, as ext4 and APFS do, so a file rewritten in place and never synced comes back empty.
final class CrashingDisk: JournalFileSystem, Sendable {
    /// Thrown by the operation the disk crashes in: nothing after it runs, as after a real crash.
    struct Crashed: Error {}

    enum Crash { case kill, powerLoss }

    private struct File {
        /// What survives a power loss.
        var durable: Data
        var current: Data
    }

    private struct State {
        var files: [Int: File] = [:]
        var names: [String: Int] = [:]
        var durableNames: [String: Int] = [:]
        var nextFile = 0
        var operations = 0
        var crashAt: Int?
        /// Crashed: the process is gone, nothing it would still do happens.
        var crashed = false
    }

    private let state = Mutex(State())

    /// The operations run so far (the ones a crash can land on).
    var operations: Int { state.withLock { $0.operations } }

    /// Crashes in the `index`-th operation from now (0: the next one).
    func crash(inOperation index: Int) {
        state.withLock { $0.crashAt = $0.operations + index }
    }

    /// What the disk holds after `crash` (the process that was writing is gone either way).
    func apply(_ crash: Crash) {
        state.withLock { state in
            state.crashAt = nil
            state.crashed = false
            guard crash == .powerLoss else { return }
            state.names = state.durableNames
            for (id, file) in state.files { state.files[id]?.current = file.durable }
        }
    }

    /// Counts an operation; throws when it is the one to crash in, after `partly` did what was done before the crash.
    private func operation(_ state: inout State, partly: (inout State) -> Void = { _ in }) throws {
        guard !state.crashed else { throw Crashed() }
        defer { state.operations += 1 }
        if state.operations == state.crashAt {
            partly(&state)
            state.crashed = true
            throw Crashed()
        }
    }

    func createFolder(_ folder: URL) throws {}  // folders are implied by the names in them

    func list(_ folder: URL) throws -> [String] {
        state.withLock { state in
            state.names.keys.filter { URL(fileURLWithPath: $0).deletingLastPathComponent().path == folder.path }
                .map { URL(fileURLWithPath: $0).lastPathComponent }
        }
    }

    func exists(_ file: URL) -> Bool {
        state.withLock { $0.names[file.path] != nil }
    }

    func size(_ file: URL) throws -> Int {
        try state.withLock { state in
            guard let id = state.names[file.path] else { throw CocoaError(.fileNoSuchFile) }
            return state.files[id]!.current.count
        }
    }

    func read(_ file: URL) throws -> Data {
        try state.withLock { state in
            guard let id = state.names[file.path] else { throw CocoaError(.fileNoSuchFile) }
            return state.files[id]!.current
        }
    }

    func create(_ file: URL, with data: Data) throws {
        try state.withLock { state in
            guard !state.crashed else { throw Crashed() }
            let id: Int
            if let existing = state.names[file.path] {
                id = existing
                state.files[id]!.durable = Data()  // truncated in place: the new size is kept at once
            } else {
                id = state.nextFile
                state.nextFile += 1
                state.files[id] = File(durable: Data(), current: Data())
                state.names[file.path] = id
            }
            try operation(&state) { state in state.files[id]!.current = data.prefix(data.count / 2) }  // a torn write
            state.files[id]!.current = data
        }
    }

    func sync(_ file: URL) throws {
        try state.withLock { state in
            try operation(&state)
            guard let id = state.names[file.path] else { throw CocoaError(.fileNoSuchFile) }
            state.files[id]!.durable = state.files[id]!.current
        }
    }

    func rename(_ source: URL, to target: URL) throws {
        try state.withLock { state in
            try operation(&state)
            guard let id = state.names.removeValue(forKey: source.path) else { throw CocoaError(.fileNoSuchFile) }
            state.names[target.path] = id
        }
    }

    func syncFolder(_ folder: URL) throws {
        try state.withLock { state in
            try operation(&state)
            let inFolder = { (path: String) in
                URL(fileURLWithPath: path).deletingLastPathComponent().path == folder.path
            }
            state.durableNames = state.durableNames.filter { !inFolder($0.key) }.merging(
                state.names.filter { inFolder($0.key) }
            ) { $1 }
        }
    }

    func remove(_ file: URL) throws {
        try state.withLock { state in
            try operation(&state)
            state.names[file.path] = nil
        }
    }
}
