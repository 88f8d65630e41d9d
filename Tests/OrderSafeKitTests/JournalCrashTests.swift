import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// The journal on a disk that is crashed in each operation of a write, by a kill and by a power loss: afterwards the
/// entry reads back whole, as it was before the write or as it is after it, never torn, empty or gone.
@Suite("Purchase journal: crash-safe on a disk that tears writes and forgets what was never synced")
struct JournalCrashTests {
    static let folder = URL(fileURLWithPath: "/phone/Library/Application Support/journal", isDirectory: true)

    static func entry(_ id: UUID, stage: JournalEntry.Stage, orderNo: String?) -> JournalEntry {
        var entry = JournalEntry(
            id: id, productID: "coins", channel: .appStore, at: Date(timeIntervalSince1970: 1_795_000_000))
        entry.stage = stage
        entry.orderNo = orderNo
        return entry
    }

    @Test(
        "a crash in any operation of a rewrite leaves the old entry or the new one, whole",
        arguments: [CrashingDisk.Crash.kill, .powerLoss])
    func rewrite(crash: CrashingDisk.Crash) async throws {
        let id = UUID()
        let before = Self.entry(id, stage: .intent, orderNo: nil)
        let after = Self.entry(id, stage: .ordered, orderNo: "OS-1")
        // How many operations one rewrite takes, counted on a disk that never crashes.
        let probe = CrashingDisk()
        try await PurchaseJournal(directory: Self.folder, fileSystem: probe).write(before)
        let start = probe.operations
        try await PurchaseJournal(directory: Self.folder, fileSystem: probe).write(after)
        let steps = probe.operations - start
        #expect(steps >= 4, "a rewrite is a new file, its sync, a rename and the folder's sync")
        var seen: Set<JournalEntry.Stage> = []
        for step in 0...steps {  // the last: the crash comes after the write returned
            let disk = CrashingDisk()
            try await PurchaseJournal(directory: Self.folder, fileSystem: disk).write(before)
            disk.crash(inOperation: step)
            _ = try? await PurchaseJournal(directory: Self.folder, fileSystem: disk).write(after)
            disk.apply(crash)
            let (entries, problems) = await PurchaseJournal(directory: Self.folder, fileSystem: disk).entries()
            #expect(problems.isEmpty, "\(crash) in operation \(step): \(problems)")
            #expect(entries == [before] || entries == [after], "\(crash) in operation \(step): \(entries)")
            entries.forEach { seen.insert($0.stage) }
        }
        #expect(seen == [.intent, .ordered], "the crashes landed both before and after the write took effect")
    }

    @Test(
        "a crash in any operation of a first write leaves no entry or the whole entry",
        arguments: [CrashingDisk.Crash.kill, .powerLoss])
    func firstWrite(crash: CrashingDisk.Crash) async throws {
        let entry = Self.entry(UUID(), stage: .intent, orderNo: nil)
        for step in 0..<8 {
            let disk = CrashingDisk()
            disk.crash(inOperation: step)
            _ = try? await PurchaseJournal(directory: Self.folder, fileSystem: disk).write(entry)
            disk.apply(crash)
            let (entries, problems) = await PurchaseJournal(directory: Self.folder, fileSystem: disk).entries()
            #expect(problems.isEmpty, "\(crash) in operation \(step): \(problems)")
            #expect(entries.isEmpty || entries == [entry], "\(crash) in operation \(step): \(entries)")
        }
    }
}
