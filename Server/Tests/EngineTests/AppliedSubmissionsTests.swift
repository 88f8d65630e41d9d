import Testing

@testable import Engine

@Suite("Applied submissions: the resends this process can answer without the writer, bounded")
struct AppliedSubmissionsTests {
    static func key(_ n: Int, user: String = "alice") -> AppliedSubmissions.Key {
        AppliedSubmissions.Key(kind: .submission, userID: user, body: Array("{\"signed_transaction\":\"\(n)\"}".utf8))
    }

    @Test("a submission is known by its kind, its user and its bytes: another user's same bytes are another submission")
    func keyed() {
        let applied = AppliedSubmissions()
        applied.remember(Self.key(1), entryID: 7)
        #expect(applied.entryID(for: Self.key(1)) == 7)
        #expect(applied.entryID(for: Self.key(1, user: "bob")) == nil)
        #expect(applied.entryID(for: Self.key(2)) == nil)
        #expect(
            AppliedSubmissions.Key(kind: .submission, userID: "ab", body: [])
                != AppliedSubmissions.Key(kind: .sync, userID: "ab", body: []))
        #expect(
            AppliedSubmissions.Key(kind: .sync, userID: "a", body: Array("b".utf8))
                != AppliedSubmissions.Key(kind: .sync, userID: "ab", body: []))
    }

    @Test(
        "two generations are kept: the newest submissions are known, the oldest forgotten, never more than two generations"
    )
    func bounded() {
        let applied = AppliedSubmissions(generation: 4)
        for n in 0..<10 { applied.remember(Self.key(n), entryID: Int64(n)) }
        // 0–3 filled the first generation, 4–7 the second; 8 dropped the first, so 4–9 are known.
        #expect((0..<10).map { applied.entryID(for: Self.key($0)) } == [nil, nil, nil, nil, 4, 5, 6, 7, 8, 9])
    }
}
