import Foundation
import OrderSafeModel
import Testing

@testable import Sandbox

/// The journal read a piece at a time and its lines read back by where they are: what lets the sandbox App Store keep
/// Apple's whole record on disk and only an index of it in memory.
@Suite("Sandbox journal: streamed at start, lines read back by reference")
struct SandboxJournalTests {
    struct Line: Codable, Equatable {
        var id: Int
        var text: String
    }

    static func file() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString).journal")
    }

    @Test("lines longer than the pieces it reads in, across their edges, come back whole and where append put them")
    func acrossPieces() throws {
        let file = Self.file()
        defer { try? FileManager.default.removeItem(at: file) }
        let lines = (0..<9).map {
            Line(id: $0, text: String(repeating: Character(UnicodeScalar(97 + $0)!), count: 300_000 + $0))
        }
        let (journal, none) = try SandboxJournal<Line>.open(file)
        #expect(none.isEmpty)
        let refs = try lines.map { try journal.append($0) }
        #expect(try refs.map(journal.read) == lines)
        var seen: [(Line, SandboxJournal<Line>.Ref)] = []
        let again = try SandboxJournal<Line>.open(file, maxBytes: 1 << 30) { seen.append(($0, $1)) }
        #expect(seen.map(\.0) == lines && seen.map(\.1) == refs)
        var each: [Line] = []
        try again.forEach { each.append($0) }
        #expect(each == lines)
        // Appended after a restart, at the end, and read back with the rest.
        let extra = try again.append(Line(id: 9, text: "last"))
        #expect(extra.offset == Int64(refs.last!.offset) + Int64(refs.last!.length))
        #expect(try again.read(extra) == Line(id: 9, text: "last") && again.read(refs[4]) == lines[4])
    }

    @Test("a last line cut short by a kill is dropped and cut off; a line that is no record is refused with its number")
    func cutAndBroken() throws {
        let file = Self.file()
        defer { try? FileManager.default.removeItem(at: file) }
        let (journal, _) = try SandboxJournal<Line>.open(file)
        try journal.append(Line(id: 1, text: "one"))
        try journal.append(Line(id: 2, text: "two"))
        let whole = try Data(contentsOf: file)
        try (whole + Data(#"{"id":3,"te"#.utf8)).write(to: file)
        var ids: [Int] = []
        _ = try SandboxJournal<Line>.open(file, maxBytes: 1 << 20) { line, _ in ids.append(line.id) }
        let cut = try Data(contentsOf: file)
        #expect(ids == [1, 2] && cut == whole)
        try (whole + Data("not a record\n".utf8) + whole).write(to: file)
        #expect(throws: SandboxJournalError.self) {
            try SandboxJournal<Line>.open(file, maxBytes: 1 << 20) { _, _ in }
        }
        do {
            _ = try SandboxJournal<Line>.open(file, maxBytes: 1 << 20) { _, _ in }
        } catch {
            #expect("\(error)".contains("line 3 is not a record"))
        }
        #expect(throws: SandboxJournalError.self) { try SandboxJournal<Line>.open(file, maxBytes: 10) { _, _ in } }
    }

    @Test("the App Store's line as written by hand reads back as JSONEncoder's would, whole and as its index")
    func keptTransactionLine() throws {
        let kept = KeptTransaction(
            id: "2000000000000001", signed: "eyJh.eyJi.c2ln", payload: #"{"productId":"vip","note":"a \"quote\" é"}"#,
            token: UUID(), original: "2000000000000001", periodEnd: Date(timeIntervalSince1970: 1_795_000_000.25),
            period: GrantPeriod(count: 1, unit: .month),
            receiptEntry: .init(
                productID: "vip", transactionID: "2000000000000001",
                purchaseDate: Date(timeIntervalSince1970: 1_795_000_000)),
            device: "phone-\n1", notification: .init(signedDate: 1_795_000_000_123, payload: "eyJ.eyJ.sig"),
            renewal: #"{"autoRenewStatus":1}"#)
        let line = Array(try kept.journalJSON().utf8)
        let decoded = try JSONDecoder().decode(KeptTransaction.self, from: Data(line))
        let sorted = JSONEncoder()
        sorted.outputFormatting = .sortedKeys
        #expect(try sorted.encode(decoded) == sorted.encode(kept))
        let index = try KeptTransaction.Index(line: line)
        #expect(index.id == kept.id && index.token == kept.token && index.original == kept.original)
        #expect(index.periodEnd == kept.periodEnd && index.period == kept.period && index.device == kept.device)
        #expect(index.notification?.signedDate == 1_795_000_000_123 && index.renewal == kept.renewal)
        let bare = KeptTransaction(id: "x", signed: "s", payload: "{}", original: "x")
        #expect(try JSONDecoder().decode(KeptTransaction.self, from: Data(bare.journalJSON().utf8)).token == nil)
    }
}
