import Foundation
import Ledger
import Testing

@testable import Engine

@Suite("Applied submissions: the resends this process can answer without the writer, bounded")
struct AppliedSubmissionsTests {
    static func key(_ n: Int, user: String = "alice") throws -> AppliedSubmissions.Key {
        try key(.submission, user: user, body: Array("{\"signed_transaction\":\"\(n)\"}".utf8))
    }

    static func key(_ kind: InboxKind, user: String, body: [UInt8]) throws -> AppliedSubmissions.Key {
        let signal = InboundSignal(
            channel: .appStore, kind: kind, headers: ["user_id": user], body: body,
            receivedAt: Date(timeIntervalSince1970: 0))
        return AppliedSubmissions.Key(try KeyedSignal(signal))
    }

    @Test("a submission is known by its kind, its user and its bytes: another user's same bytes are another submission")
    func keyed() throws {
        let applied = AppliedSubmissions()
        applied.remember(try Self.key(1), entryID: 7)
        #expect(applied.entryID(for: try Self.key(1)) == 7)
        #expect(applied.entryID(for: try Self.key(1, user: "bob")) == nil)
        #expect(applied.entryID(for: try Self.key(2)) == nil)
        #expect(try Self.key(.submission, user: "ab", body: []) != Self.key(.sync, user: "ab", body: []))
        #expect(try Self.key(.sync, user: "a", body: Array("b".utf8)) != Self.key(.sync, user: "ab", body: []))
    }

    @Test(
        "two generations are kept: the newest submissions are known, the oldest forgotten, never more than two generations"
    )
    func bounded() throws {
        let applied = AppliedSubmissions(generation: 4)
        for n in 0..<10 { try applied.remember(Self.key(n), entryID: Int64(n)) }
        // 0–3 filled the first generation, 4–7 the second; 8 dropped the first, so 4–9 are known.
        #expect(try (0..<10).map { applied.entryID(for: try Self.key($0)) } == [nil, nil, nil, nil, 4, 5, 6, 7, 8, 9])
    }
}
