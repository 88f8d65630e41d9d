import Foundation
import LedgerTestSupport
import OrderSafeModel
import SQLKit
import Testing

@testable import Ledger

@Suite("Ledger inbox: a verified JWS header kept once, every body read back as received")
struct InboxSegmentTests {
    /// `{"signed_transaction":"<header>.<payload>.<signature>"}` with a header of `chain` (base64url of
    /// `{"alg":"ES256","x5c":["<chain>"]}`, as Apple's: its chain is ~3 KiB).
    static func submission(chain: String, payload: String) -> [UInt8] {
        let header = Data(#"{"alg":"ES256","x5c":["\#(chain)"]}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return Array(#"{"signed_transaction":"\#(header).\#(payload).c2lnbmF0dXJl"}"#.utf8)
    }

    static let chainA = String(repeating: "MIIEMDCCA7agAwIBAgIQfTlfd0fNvLsAbCdE", count: 80)
    static let chainB = String(repeating: "MIIDFjCCApygAwIBAgIUIsGhRwp0c2nvU4YSy", count: 80)
    static let chainC = String(repeating: "MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYI", count: 80)

    @Test("the segment is the first JWS header of at least 1 KiB; the rest and its place give the body back")
    func splitting() throws {
        let body = Self.submission(chain: Self.chainA, payload: "eyJwYXlsb2FkIjoxfQ")
        let segment = try #require(InboxSegment(splitting: body))
        #expect(segment.offset == #"{"signed_transaction":""#.utf8.count)
        #expect(segment.bytes.count >= InboxSegment.minimumLength && segment.bytes.starts(with: Array("eyJ".utf8)))
        #expect(!segment.bytes.contains(UInt8(ascii: ".")) && body[segment.offset + segment.bytes.count] == 0x2E)
        #expect(
            Array(segment.rest[..<segment.offset]) + segment.bytes + segment.rest[segment.offset...] == body)
        #expect(segment.rest.count == body.count - segment.bytes.count)
        // Another transaction signed by the same key: the same segment; another key's: another.
        let same = try #require(
            InboxSegment(splitting: Self.submission(chain: Self.chainA, payload: "eyJwYXlsb2FkIjoyfQ")))
        let other = try #require(
            InboxSegment(splitting: Self.submission(chain: Self.chainB, payload: "eyJwYXlsb2FkIjoxfQ")))
        #expect(same.sha256 == segment.sha256 && other.sha256 != segment.sha256 && segment.sha256.count == 64)

        for kept in [
            Self.submission(chain: "MIIB", payload: "eyJ4IjoxfQ"),  // a short header stays where it is
            Array(body.dropFirst(#"{"signed_transaction":""#.utf8.count)),  // no quote before it
            Array(#"{"a":""#.utf8) + segment.bytes + Array(#""}"#.utf8),  // no "." after it
            Array(#"{"a":""#.utf8) + segment.bytes,  // the body ends inside it
            [], Array("\"eyJ".utf8), Array(String(repeating: "\"eyJ.", count: 1000).utf8),
        ] {
            #expect(InboxSegment(splitting: kept) == nil)
        }
    }

    @Test("the segment runs over base64url's alphabet only: each of the 256 byte values in its middle, tried")
    func alphabet() throws {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let (head, tail) = (Array("eyJ".utf8) + Array(repeating: UInt8(ascii: "A"), count: 1100), Array("QUFB".utf8))
        for byte in UInt8.min...UInt8.max {
            let body = Array(#"{"a":""#.utf8) + head + [byte] + tail + Array(#".e30.c2ln"}"#.utf8)
            let segment = InboxSegment(splitting: body)
            if alphabet.contains(byte) {
                #expect(segment?.bytes == head + [byte] + tail, "byte \(byte)")
            } else if byte == UInt8(ascii: ".") {
                #expect(segment?.bytes == head, "byte \(byte)")
            } else {
                #expect(segment == nil, "byte \(byte)")
            }
        }
    }

    @Test("a segment noted as kept gives its digest to the next with the same bytes, and to no other")
    func digestOfTheLatest() throws {
        let known = KnownInboxSegments()
        let first = try #require(InboxSegment(splitting: Self.submission(chain: Self.chainA, payload: "eyJ4IjoxfQ")))
        known.insert(first)
        for (chain, payload) in [(Self.chainA, "eyJ4IjoyfQ"), (Self.chainB, "eyJ4IjoxfQ"), (Self.chainA, "eyJ4IjozfQ")]
        {
            let body = Self.submission(chain: chain, payload: payload)
            let computed = try #require(InboxSegment(splitting: body))
            let shortcut = try #require(InboxSegment(splitting: body, known: known))
            #expect(shortcut == computed)
            known.insert(shortcut)
        }
        #expect(known.contains(first.sha256))
        // The latest segment at the start of a longer run, or with no `.` after it, or a run of its length with one
        // byte changed, is not the segment: the run is read as without it.
        known.insert(first)
        let (before, after) = (Array(#"{"a":""#.utf8), Array(".e30.c2ln\"}".utf8))
        var altered = first.bytes
        altered[altered.count / 2] =
            altered[altered.count / 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        for body in [
            before + altered + after,
            before + first.bytes + Array("QUFB".utf8) + after, before + first.bytes, before + first.bytes + [0x22],
            before + first.bytes + Array("-_".utf8) + after, before + first.bytes + after,
            before + Array(first.bytes.dropLast()) + after,
        ] {
            #expect(InboxSegment(splitting: body, known: known) == InboxSegment(splitting: body))
        }
    }

    /// A JWS Apple signed: a sandbox renewal info published as a test fixture by awa/go-iap (d575ac2,
    /// appstore/validator_test.go), in `../shared/vectors/appstore/real_apple_jws`, read in place; nil when the
    /// vectors are not beside the repository.
    static let realJWS: String? = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(
                "shared/vectors/appstore/real_apple_jws/go-iap_sandbox_renewalInfo_2000000335310644.jws")
        return (try? String(contentsOf: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    @Test(
        "Apple's own JWS: its header is the segment, its chain kept once, its body read back whole",
        .enabled(if: realJWS != nil), arguments: TestEngine.available)
    func applesJWS(engine: TestEngine) async throws {
        let jws = try #require(Self.realJWS)
        let body = Array(#"{"signed_transaction":"\#(jws)"}"#.utf8)
        let segment = try #require(InboxSegment(splitting: body))
        #expect(segment.bytes == Array(jws.utf8.prefix { $0 != UInt8(ascii: ".") }), "the whole header, no more")
        try await engine.withLedger { database, ledger in
            let signal = InboundSignal(
                channel: .appStore, kind: .submission, headers: ["x-ordersafe-user": "u"], body: body,
                receivedAt: Fixtures.now)
            let id = try await ledger.storeInbound(signal, appliedAt: Fixtures.now).id
            #expect(try await InboxTests.body(database, id) == Data(body))
            #expect(try await ledger.inboxFootprint().bodyBytes == Int64(body.count - segment.bytes.count))
        }
    }

    @Test(
        "a verified submission's header is one row for all that carry it; each body reads back byte for byte",
        arguments: TestEngine.available)
    func keptOnce(engine: TestEngine) async throws {
        try await engine.withLedger { database, ledger in
            let bodies = [
                Self.submission(chain: Self.chainA, payload: "eyJ0eCI6MX0"),
                Self.submission(chain: Self.chainA, payload: "eyJ0eCI6Mn0"),
                Self.submission(chain: Self.chainB, payload: "eyJ0eCI6M30"),
                Self.submission(chain: "MIIB", payload: "eyJ0eCI6NH0"),
            ]
            var ids: [Int64] = []
            for (index, body) in bodies.enumerated() {
                let signal = InboundSignal(
                    channel: .appStore, kind: .submission, headers: ["x-ordersafe-user": "u\(index)"], body: body,
                    receivedAt: Fixtures.now)
                // Through a write, as the inbox stores a verified submission with what it records.
                ids.append(
                    try await ledger.atomically { write in
                        try await write.storeInbound(signal, appliedAt: Fixtures.now).id
                    })
            }
            // Unverified (a notification waiting for its check): whole, whatever it carries.
            let notification = InboundSignal(
                channel: .appStore, kind: .notify, headers: [:],
                body: Self.submission(chain: Self.chainC, payload: "eyJub3RpZnkiOjF9"), receivedAt: Fixtures.now)
            ids.append(try await ledger.storeInbound(notification).id)

            for (id, body) in zip(ids, bodies + [notification.body]) {
                #expect(try await InboxTests.body(database, id) == Data(body), "entry \(id)")
            }
            let stored = try await database.withSession { db in
                try await db.raw("SELECT COUNT(*) AS n FROM inbox_segments").first()!.decode(column: "n", as: Int.self)
            }
            #expect(stored == 2, "one row per verified key's header; the unverified notification's is in its entry")
            let footprint = try await ledger.inboxFootprint()
            let whole = bodies.map(\.count).reduce(notification.body.count, +)
            #expect(footprint.bodyBytes < whole - 3 * Self.chainA.count, "three headers are not in their entries")
            // A submission sent again is the same entry: nothing more is stored.
            let again = InboundSignal(
                channel: .appStore, kind: .submission, headers: ["x-ordersafe-user": "u0"], body: bodies[0],
                receivedAt: Fixtures.now)
            #expect(try await ledger.storeInbound(again, appliedAt: Fixtures.now).id == ids[0])
            #expect(try await ledger.inboxFootprint().bodyBytes == footprint.bodyBytes)
        }
    }

    @Test(
        "a header whose write rolled back is not taken for stored: the next write stores it",
        arguments: TestEngine.available)
    func rolledBack(engine: TestEngine) async throws {
        struct Abandoned: Error {}
        try await engine.withLedger { database, ledger in
            let body = Self.submission(chain: Self.chainA, payload: "eyJ0eCI6MX0")
            let signal = InboundSignal(
                channel: .appStore, kind: .submission, headers: ["x-ordersafe-user": "u"], body: body,
                receivedAt: Fixtures.now)
            await #expect(throws: Abandoned.self) {
                try await ledger.atomically { write in
                    _ = try await write.storeInbound(signal, appliedAt: Fixtures.now)
                    throw Abandoned()
                }
            }
            let id = try await ledger.atomically { write in
                try await write.storeInbound(signal, appliedAt: Fixtures.now).id
            }
            #expect(try await InboxTests.body(database, id) == Data(body))
            // Known now: the next entry with it writes no row for it, and still reads back whole.
            var next = signal
            next.body = Self.submission(chain: Self.chainA, payload: "eyJ0eCI6Mn0")
            let nextID = try await ledger.storeInbound(next, appliedAt: Fixtures.now).id
            #expect(try await InboxTests.body(database, nextID) == Data(next.body))
        }
    }
}

@Suite("Ledger inbox: the queries of entries not processed yet go through indexes that hold only those")
struct InboxIndexTests {
    /// SQLite's plan of `query`, its details joined.
    static func plan(_ query: LedgerSQL, _ database: LedgerDatabase) async throws -> String {
        try await database.read { db in
            try await db.sql("EXPLAIN QUERY PLAN \(query)").all()
                .map { try $0.decode(column: "detail", as: String.self) }.joined(separator: "; ")
        }
    }

    @Test(
        "the sweep, a chain's waiting signals, a submission's lookup, the held and the refused use the partial indexes")
    func plans() async throws {
        try await TestEngine.sqlite.withLedger { database, ledger in
            // Many processed entries (as submissions are stored), a few not: the indexes hold the few.
            for index in 0..<200 {
                let signal = InboundSignal(
                    channel: .appStore, kind: index < 190 ? .submission : .notify, headers: [:],
                    body: Array("{\"n\":\(index)}".utf8), receivedAt: Fixtures.now)
                let entry =
                    index < 190
                    ? try await ledger.storeInbound(signal, appliedAt: Fixtures.now)
                    : try await ledger.storeInbound(signal)
                try await ledger.awaitChain(inboxID: entry.id, chain: "chain-\(index % 7)", signedAt: nil)
            }
            let sweep = try await Self.plan(
                SQLLedger.pendingSignalsQuery(
                    channels: [.appStore, .alipay], before: Fixtures.now.addingTimeInterval(60), maxAttempts: 5,
                    limit: 10), database)
            #expect(sweep.contains("USING INDEX inbox_unprocessed"), "\(sweep)")
            let waiting = try await Self.plan(SQLLedger.signalsAwaitingQuery(chain: "chain-3"), database)
            #expect(waiting.contains("USING INDEX inbox_by_chain"), "\(waiting)")
            let lookup = try await Self.plan(
                SQLLedger.lookup(PaymentQuery(channel: .appStore, providerTransactionID: "1", chainOf: "chain-3")),
                database)
            #expect(lookup.contains("inbox_by_chain"), "\(lookup)")
            let held = try await Self.plan(
                "SELECT id FROM inbox WHERE \(unsafeRaw: SQLLedger.held) AND id > 0 ORDER BY id", database)
            #expect(held.contains("USING INDEX inbox_by_verdict"), "\(held)")
            let refused = try await Self.plan(
                "SELECT id FROM inbox WHERE verdict = 'refused' ORDER BY id DESC LIMIT 1 OFFSET 3", database)
            #expect(
                refused.contains("USING INDEX inbox_refused") || refused.contains("USING COVERING INDEX inbox_refused"),
                "\(refused)")
            // The unprocessed ones are 190–199: of chain-3, 192 and 199.
            #expect(try await ledger.signalsAwaiting(chain: "chain-3").map(\.id).count == 2)
            let swept = try await ledger.pendingSignals(
                channels: [.appStore], before: Fixtures.now.addingTimeInterval(60), maxAttempts: 5, limit: 100)
            #expect(swept.count == 10)
        }
    }
}
