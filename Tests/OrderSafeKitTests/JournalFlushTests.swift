import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// The crash tests run on a fake disk; this one runs a journal write on the device's real file system and watches
/// each flush it asks of the storage: the temporary file's before the rename, the folder's after it.
@Suite("Purchase journal: the real disk's flushes")
struct JournalFlushTests {
    /// What the disk looked like at each flush: the path flushed, and what the entry's file held then.
    final class Flushes: @unchecked Sendable {
        struct Flush: Equatable {
            var path: String
            var entryStage: JournalEntry.Stage?
        }
        private let lock = NSLock()
        private var recorded: [Flush] = []
        let entryFile: URL

        init(entryFile: URL) { self.entryFile = entryFile }

        var all: [Flush] { lock.withLock { recorded } }

        func record(_ descriptor: Int32) -> Int32 {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .millisecondsSince1970
            let stage = (try? Data(contentsOf: entryFile)).flatMap {
                try? decoder.decode(JournalEntry.self, from: $0).stage
            }
            let flush = Flush(path: Self.path(of: descriptor), entryStage: stage)
            lock.withLock { recorded.append(flush) }
            return LocalFileSystem.flushToStorage(descriptor)
        }

        /// The path an open descriptor names, as the kernel reports it.
        static func path(of descriptor: Int32) -> String {
            #if canImport(Darwin)
            var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
            guard fcntl(descriptor, F_GETPATH, &buffer) == 0 else { return "?" }
            return String(cString: buffer)
            #else
            return (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) ?? "?"
            #endif
        }
    }

    @Test(
        "each write flushes the temporary file before the rename and the folder after it, on the real file system")
    func flushOrder() async throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("journal-flush-\(UUID().uuidString)", isDirectory: true).resolvingSymlinksInPath()
        defer { try? FileManager.default.removeItem(at: folder) }
        var entry = JournalEntry(
            id: UUID(), productID: "coins", channel: .appStore, at: Date(timeIntervalSince1970: 1_795_000_000))
        let flushes = Flushes(entryFile: folder.appendingPathComponent(entry.id.uuidString.lowercased() + ".json"))
        let journal = PurchaseJournal(
            directory: folder, fileSystem: LocalFileSystem(flush: { flushes.record($0) }))
        _ = await journal.entries()  // creates the folder

        try await journal.write(entry)
        entry.stage = .ordered
        entry.orderNo = "OS-1"
        try await journal.write(entry)

        let folderPath = folder.resolvingSymlinksInPath().path
        let seen = flushes.all
        #expect(seen.count == 4, "two flushes per write: \(seen)")
        guard seen.count == 4 else { return }
        for (write, before) in [(0, nil), (1, JournalEntry.Stage.intent)] as [(Int, JournalEntry.Stage?)] {
            let file = seen[2 * write]
            let name = URL(fileURLWithPath: file.path).lastPathComponent
            #expect(
                file.path.hasPrefix(folderPath + "/") && name.hasPrefix(".") && name.hasSuffix(".tmp"),
                "write \(write) flushes its temporary file first: \(file.path)")
            #expect(file.entryStage == before, "write \(write): the rename comes after the file's flush")
            let directory = seen[2 * write + 1]
            #expect(directory.path == folderPath, "write \(write) flushes the folder second: \(directory.path)")
            #expect(
                directory.entryStage == (write == 0 ? .intent : .ordered),
                "write \(write): the folder is flushed after the rename")
        }
    }

    @Test("a flush the disk refuses fails the write, and the entry keeps its old contents")
    func refusedFlush() async throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("journal-flush-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let entry = JournalEntry(
            id: UUID(), productID: "coins", channel: .appStore, at: Date(timeIntervalSince1970: 1_795_000_000))
        let journal = PurchaseJournal(directory: folder, fileSystem: LocalFileSystem(flush: { _ in -1 }))
        _ = await journal.entries()
        await #expect(throws: JournalError.self) { try await journal.write(entry) }
        #expect(await journal.entries().entries.isEmpty)
    }
}
