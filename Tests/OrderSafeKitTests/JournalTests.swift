import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// The journal on disk is untrusted: whatever is in the folder, it never crashes and never drops a file silently.
@Suite("Purchase journal")
struct JournalTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)", isDirectory: true)
    }

    @Test("entries round-trip; removing one removes its file; leftovers of a killed write are cleaned up")
    func roundTrip() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let journal = PurchaseJournal(directory: folder)
        var entry = JournalEntry(
            id: UUID(), productID: "coins", channel: .appStore, at: Date(timeIntervalSince1970: 1_795_000_000))
        entry.stage = .submitting
        entry.transactionID = 42
        try await journal.write(entry)
        try Data("half".utf8).write(to: folder.appendingPathComponent(".\(UUID().uuidString).tmp"))
        let (entries, problems) = await journal.entries()
        #expect(entries == [entry])
        #expect(problems.isEmpty)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
        await journal.remove(entry.id)
        #expect(await journal.entries().entries.isEmpty)
    }

    @Test(
        "corrupt, truncated, oversized, misnamed or alien files are reported and set aside, never a crash",
        arguments: ["{\"id\":", "not json at all", "{}", "[1,2,3]", "oversized", "misnamed", "\u{0}\u{1}\u{2}"])
    func corruptFiles(content: String) async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let journal = PurchaseJournal(directory: folder)
        let good = JournalEntry(
            id: UUID(), productID: "coins", channel: .alipay, at: Date(timeIntervalSince1970: 1_795_000_000))
        try await journal.write(good)
        var bytes = Data(content.utf8)
        if content == "oversized" { bytes = Data(repeating: 0x20, count: PurchaseJournal.maxFileBytes + 1) }
        if content == "misnamed" {
            // A valid entry under another entry's name.
            bytes = try Data(contentsOf: folder.appendingPathComponent(good.id.uuidString.lowercased() + ".json"))
        }
        let name = UUID().uuidString.lowercased() + ".json"
        try bytes.write(to: folder.appendingPathComponent(name))
        let (entries, problems) = await journal.entries()
        #expect(entries == [good])
        #expect(problems.map(\.file) == [name])
        let aside = try FileManager.default.contentsOfDirectory(
            atPath: folder.appendingPathComponent("unreadable").path)
        #expect(aside.count == 1 && aside[0].hasSuffix(name), "set aside, not deleted")
        #expect(await journal.entries().problems.isEmpty, "reported once")
    }

    @Test("a corrupt journal file is reported through events at launch, and the rest resumes")
    func reportedAtLaunch() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        try FileManager.default.createDirectory(at: h.folder, withIntermediateDirectories: true)
        try Data("{garbage".utf8).write(
            to: h.folder.appendingPathComponent("0b8c1a5e-0000-4000-8000-000000000000.json"))
        let app = h.app()
        let events = app.events()
        await app.start()
        await app.stop()
        var problems: [String] = []
        for await event in events {
            if case .journalProblem(let file, _) = event { problems.append(file) }
        }
        #expect(problems == ["0b8c1a5e-0000-4000-8000-000000000000.json"])
    }

    @Test("a full journal refuses a new purchase before any order is made")
    func full() async throws {
        let h = Harness()
        defer { h.cleanUp() }
        let journal = PurchaseJournal(directory: h.folder)
        for _ in 0..<PurchaseJournal.maxEntries {
            try await journal.write(JournalEntry(id: UUID(), productID: "gift", channel: .alipay, at: Date()))
        }
        let outcome = await h.app().purchase("coins", through: .appStore)
        #expect(outcome.state == .failed(.journalUnavailable("the journal already holds 256 purchases on their way")))
        #expect(await h.server.orders.isEmpty)
    }
}
