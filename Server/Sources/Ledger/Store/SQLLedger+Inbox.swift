import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

/// The inbox: every signal from outside kept as it came (a submission, a notification), looked up by its key, and
/// finished with its verdict; what waits for a chain, and the refused entries' purge.
extension SQLLedger {
    /// Notifications are one signal per body (the same bytes resent are the same notification); anything else, such
    /// as app submissions whose headers name the user, is one signal per headers and body, so two users sending the
    /// same transaction each get an entry of their own.
    public func storeInbound(_ signal: InboundSignal) async throws -> InboxEntry {
        let keyed = try KeyedSignal(signal)
        let (headers, sha) = (keyed.headers, keyed.sha256)
        // A resend (a retry, a repeat submission) is found by a reader and writes nothing. (Inside a write, whose
        // caller has just looked, the insert goes first.)
        if write == nil,
            let existing = try await database.read(
                joining: write,
                { db in
                    try await Self.inboxEntry(db, signal.channel, signal.kind, sha: sha, headers: headers)
                })
        {
            guard existing.refused else { return existing.entry }
            return try await database.transaction(joining: write) { db in
                try await Self.reopenRefused(db, existing, signal, headers: headers)
            }
        }
        return try await insertInbound(keyed, appliedAt: nil)
    }

    public func storeInbound(_ keyed: KeyedSignal, appliedAt date: Date) async throws -> InboxEntry {
        try await insertInbound(keyed, appliedAt: date)
    }

    public func storeInbound(_ keyed: KeyedSignal, appliedAt date: Date, lookingUp query: PaymentQuery) async throws
        -> (entry: InboxEntry, lookup: PaymentLookup)
    {
        guard database.engine == .postgres else {
            // SQLite takes no data-changing WITH, and a statement more costs it no round trip. Its lookup asks whether a
            // reversal waits for the transaction (``ReservedPayment``): the payment's insert then need not. It reads on
            // the write's connection, where what it learns is kept for the payment (a reader's keeps nothing).
            let entry = try await storeInbound(keyed, appliedAt: date)
            return try await database.read(joining: write) { db in
                guard
                    let row = try await db.sql(
                        Self.lookup(
                            query,
                            also: ReservedPayment.columns(
                                query.channel, query.providerTransactionID, reservingIDs: false))
                    ).first()
                else { throw LedgerCorruption(detail: "a lookup of one row returned none") }
                return (entry, try Self.lookedUp(row, query, reservingIDs: false, in: db))
            }
        }
        let (signal, headers, sha) = (keyed.signal, keyed.headers, keyed.sha256)
        let segment = InboxSegment(splitting: signal.body, known: database.knownInboxSegments)
        let stored = try await database.transaction(joining: write) { [database] db in
            try await Self.keep(segment, known: database.knownInboxSegments, db)
            // The lookup's snapshot is the statement's: it does not see the entry (which waits for no chain). The
            // ids of the order and payment the write may record are reserved with it (``ReservedPayment``).
            guard
                let row = try await db.sql(
                    """
                    WITH stored AS (\(Self.inboxInsert(signal, headers: headers, sha256: sha, appliedAt: date, segment: segment)) RETURNING id)
                    SELECT (SELECT id FROM stored) AS inbox_id, lookup.*, \(ReservedPayment.columns(query.channel, query.providerTransactionID, reservingIDs: true))
                    FROM (\(Self.lookup(query, locking: Self.locksOrders(db)))) AS lookup
                    """
                ).first()
            else { throw LedgerCorruption(detail: "a lookup of one row returned none") }
            let lookup = try Self.lookedUp(row, query, reservingIDs: true, in: db)
            if let id = try row.decode(column: "inbox_id", as: Int64?.self) {
                return (InboxEntry(id: id, isNew: true, processed: true), lookup)
            }
            return (try await Self.storedInboxEntry(db, signal, headers: headers, sha256: sha), lookup)
        }
        await noteKept(segment)
        return stored
    }

    /// The lookup an entry's statement made, and when it found no payment, what it learnt ahead for the one the write
    /// may record (``ReservedPayment``), kept for it.
    private static func lookedUp(_ row: any SQLRow, _ query: PaymentQuery, reservingIDs: Bool, in db: any SQLDatabase)
        throws -> PaymentLookup
    {
        let lookup = try Self.decodeLookup(row, query, in: db)
        if lookup.payment == nil {
            LedgerDatabase.reservedPayment(db)?.keep(try ReservedPayment(row, query, reservingIDs: reservingIDs))
        }
        return lookup
    }

    /// Inserts the entry (as applied at `appliedAt`, when given: verified, so its JWS header is kept apart), or
    /// returns the one stored before.
    private func insertInbound(_ keyed: KeyedSignal, appliedAt: Date?) async throws -> InboxEntry {
        let (signal, headers, sha) = (keyed.signal, keyed.headers, keyed.sha256)
        let segment =
            appliedAt == nil ? nil : InboxSegment(splitting: signal.body, known: database.knownInboxSegments)
        let entry = try await database.transaction(joining: write) { [database] db in
            try await Self.keep(segment, known: database.knownInboxSegments, db)
            if let id = try await db.insertedID(
                Self.inboxInsert(signal, headers: headers, sha256: sha, appliedAt: appliedAt, segment: segment))
            {
                return InboxEntry(id: id, isNew: true, processed: appliedAt != nil)
            }
            return try await Self.storedInboxEntry(db, signal, headers: headers, sha256: sha)
        }
        await noteKept(segment)
        return entry
    }

    /// The entry's insert, which inserts nothing when the same signal was stored before (``SQLDatabase/insertedID(_:)``
    /// answers its id). With a `segment`, the entry holds the rest of the body and where the segment stood.
    private static func inboxInsert(
        _ signal: InboundSignal, headers: String, sha256 sha: String, appliedAt: Date?, segment: InboxSegment?
    ) -> LedgerSQL {
        let applied = appliedAt.map { $0.millisecondsSince1970 }
        return """
            INSERT INTO inbox (channel, kind, body_sha256, headers, body, segment_sha256, segment_at, received_at,
                               processed_at, verdict, attempts)
            VALUES (\(bind: signal.channel.rawValue), \(bind: signal.kind.rawValue), \(bind: sha), \(bind: headers),
                    \(bind: Data(segment?.rest ?? signal.body)), \(bind: segment?.sha256), \(bind: segment?.offset),
                    \(bind: signal.receivedAt.millisecondsSince1970), \(bind: applied),
                    \(bind: applied == nil ? nil : InboxVerdict.applied.rawValue), \(bind: applied == nil ? 0 : 1))
            ON CONFLICT DO NOTHING
            """
    }

    /// Stores `segment` in `inbox_segments` unless this process knows it is there (``noteKept(_:)``). Whoever else
    /// stored it meanwhile, the row is one: the insert does nothing then.
    private static func keep(_ segment: InboxSegment?, known: KnownInboxSegments, _ db: any SQLDatabase) async throws {
        guard let segment, !known.contains(segment.sha256) else { return }
        try await db.sql(
            """
            INSERT INTO inbox_segments (sha256, bytes) VALUES (\(bind: segment.sha256), \(bind: Data(segment.bytes)))
            ON CONFLICT DO NOTHING
            """
        ).run()
    }

    /// Once the write that kept `segment` has committed, this process knows it is stored.
    private func noteKept(_ segment: InboxSegment?) async {
        guard let segment else { return }
        await afterCommit { [known = database.knownInboxSegments] in known.insert(segment) }
    }

    /// The columns of an entry as a ``PendingSignal`` (``decodeSignal(_:)``), its body as received.
    static let signalColumns =
        "inbox.id AS id, channel, headers, (SELECT body FROM inbox_bodies WHERE inbox_bodies.id = inbox.id) AS body, attempts"

    /// The entry an insert found stored before it.
    private static func storedInboxEntry(
        _ db: any SQLDatabase, _ signal: InboundSignal, headers: String, sha256 sha: String
    ) async throws -> InboxEntry {
        guard let existing = try await inboxEntry(db, signal.channel, signal.kind, sha: sha, headers: headers) else {
            throw LedgerCorruption(detail: "an inbox entry neither inserted nor found")
        }
        return try await reopenRefused(db, existing, signal, headers: headers)
    }

    /// The headers as the inbox stores them: `JSONEncoder`'s bytes with sorted keys; an app submission's one header
    /// is written directly (`JSONEncoder` was 1% of a repeat submission's time).
    package static func storedHeaders(_ headers: [String: String]) throws -> String {
        if headers.count == 1, let (name, value) = headers.first {
            var json = JSONText(escapingSlashes: true, capacity: 32)
            json.append("{")
            json.append(string: name)
            json.append(":")
            json.append(string: value)
            json.append("}")
            return json.string
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(headers), as: UTF8.self)
    }

    /// The entry stored before with this body, and whether it was refused (then it is cut to its first bytes and
    /// holds the refused copy's headers).
    private static func inboxEntry(
        _ db: any SQLDatabase, _ channel: Channel, _ kind: InboxKind, sha: String, headers: String
    ) async throws
        -> (entry: InboxEntry, refused: Bool)?
    {
        guard
            let existing = try await db.sql(
                """
                SELECT id, processed_at, headers, verdict FROM inbox
                WHERE channel = \(bind: channel.rawValue) AND kind = \(bind: kind.rawValue) AND body_sha256 = \(bind: sha)
                """
            ).first()
        else { return nil }
        let refused = try existing.decode(column: "verdict", as: String?.self) == InboxVerdict.refused.rawValue
        let entry = InboxEntry(
            id: try existing.decode(column: "id", as: Int64.self), isNew: false,
            processed: try existing.decode(column: "processed_at", as: Int64?.self) != nil && !refused
                && existing.decode(column: "headers", as: String.self) == headers)
        return (entry, refused)
    }

    /// A signal whose body a refused entry holds (a signature probe carrying a genuine body, a forgery that copied
    /// one) takes the entry over: its whole body and its own headers, open again to be processed, so a refused copy
    /// never stands in for it — as evidence, nor by being purged with the refused.
    private static func reopenRefused(
        _ db: any SQLDatabase, _ found: (entry: InboxEntry, refused: Bool), _ signal: InboundSignal, headers: String
    ) async throws -> InboxEntry {
        guard found.refused else { return found.entry }
        try await db.sql(
            """
            UPDATE inbox SET headers = \(bind: headers), body = \(bind: Data(signal.body)), segment_sha256 = NULL,
                             segment_at = NULL, processed_at = NULL, verdict = NULL,
                             last_error = NULL, received_at = \(bind: signal.receivedAt.millisecondsSince1970)
            WHERE id = \(bind: found.entry.id) AND verdict = \(bind: InboxVerdict.refused.rawValue)
            """
        ).run()
        return found.entry
    }

    public func pendingSignals(channels: Set<Channel>, before: Date, maxAttempts: Int, limit: Int) async throws
        -> [PendingSignal]
    {
        guard !channels.isEmpty else { return [] }
        return try await database.read(joining: write) { db in
            try await db.sql(
                Self.pendingSignalsQuery(channels: channels, before: before, maxAttempts: maxAttempts, limit: limit)
            )
            .all().map(Self.decodeSignal)
        }
    }

    /// The sweep's query (``pendingSignals(channels:before:maxAttempts:limit:)``): through `inbox_unprocessed`.
    static func pendingSignalsQuery(channels: Set<Channel>, before: Date, maxAttempts: Int, limit: Int)
        -> LedgerSQL
    {
        """
        SELECT \(unsafeRaw: Self.signalColumns) FROM inbox
        WHERE kind = \(literal: InboxKind.notify) AND processed_at IS NULL AND received_at < \(bind: before.millisecondsSince1970)
          AND attempts < \(bind: maxAttempts)
          AND channel IN (\(binds: channels.map(\.rawValue).sorted()))
        ORDER BY id LIMIT \(bind: limit)
        """
    }

    static func decodeSignal(_ row: any SQLRow) throws -> PendingSignal {
        guard let channel = Channel(rawValue: try row.decode(column: "channel", as: String.self)) else {
            throw LedgerCorruption(detail: "an inbox row has an unknown channel")
        }
        return PendingSignal(
            id: try row.decode(column: "id", as: Int64.self), channel: channel,
            headers: try JSONDecoder().decode(
                [String: String].self, from: Data(try row.decode(column: "headers", as: String.self).utf8)),
            body: Array(try row.decode(column: "body", as: Data.self)),
            attempts: Int(try row.decode(column: "attempts", as: Int64.self)))
    }

    /// Records how processing an entry ended. `applied` closes it; `waiting` and `failed` keep it for the retry
    /// sweep with `note`; `refused` (unauthenticated bytes) closes it, keeps only the first ``refusedBodyBytes``
    /// of its body for forensics, and lets ``purgeRefusedInbound(before:keeping:)`` delete it later.
    public func finishInbound(id: Int64, verdict: InboxVerdict, note: String?, at date: Date) async throws {
        let note = note.map { String($0.prefix(500)) }
        try await database.transaction(joining: write) { db in
            switch verdict {
            case .applied:
                try await db.sql(
                    """
                    UPDATE inbox SET attempts = attempts + 1, last_error = NULL, processed_at = \(bind: date.millisecondsSince1970),
                                     verdict = \(bind: verdict.rawValue)
                    WHERE id = \(bind: id) AND processed_at IS NULL
                    """
                ).run()
            case .waiting, .failed, .held:
                try await db.sql(
                    """
                    UPDATE inbox SET attempts = attempts + 1, last_error = \(bind: note), verdict = \(bind: verdict.rawValue)
                    WHERE id = \(bind: id) AND processed_at IS NULL
                    """
                ).run()
            case .refused:
                // Cut in the database (substr works on SQLite BLOBs and PostgreSQL bytea alike): the refused body,
                // up to the body limit, is never read back on the path a flood of forgeries takes.
                try await db.sql(
                    """
                    UPDATE inbox SET attempts = attempts + 1, last_error = \(bind: note), processed_at = \(bind: date.millisecondsSince1970),
                                     verdict = \(bind: verdict.rawValue), body = substr(body, 1, \(unsafeRaw: String(Self.refusedBodyBytes)))
                    WHERE id = \(bind: id) AND processed_at IS NULL
                    """
                ).run()
            }
        }
    }

    /// What the inbox holds: entries and body bytes (for operators and the flood test).
    public func inboxFootprint() async throws -> (entries: Int, bodyBytes: Int64, headerBytes: Int64) {
        try await database.read(joining: write) { db in
            let row = try await db.sql(
                """
                SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(body)), 0) AS bytes, COALESCE(SUM(LENGTH(headers)), 0) AS header_bytes FROM inbox
                """
            ).first()!
            return (
                try row.decode(column: "n", as: Int.self), try row.decode(column: "bytes", as: Int64.self),
                try row.decode(column: "header_bytes", as: Int64.self)
            )
        }
    }

    /// Marks a waiting entry as waiting for the subscription chain `chain` to gain an owner; `signedAt` (the
    /// provider's date, milliseconds) orders the chain's signals when they are applied.
    public func awaitChain(inboxID: Int64, chain: String, signedAt: Int64?) async throws {
        try await database.transaction(joining: write) { db in
            try await db.sql(
                """
                UPDATE inbox SET chain = \(bind: chain), signed_at = \(bind: signedAt) WHERE id = \(bind: inboxID)
                """
            ).run()
        }
    }

    /// The entries still waiting for `chain`, in the provider's order.
    public func signalsAwaiting(chain: String) async throws -> [PendingSignal] {
        try await database.read(joining: write) { db in
            try await db.sql(Self.signalsAwaitingQuery(chain: chain)).all().map(Self.decodeSignal)
        }
    }

    /// ``signalsAwaiting(chain:)``'s query: through `inbox_by_chain`.
    static func signalsAwaitingQuery(chain: String) -> LedgerSQL {
        """
        SELECT \(unsafeRaw: Self.signalColumns) FROM inbox
        WHERE chain = \(bind: chain) AND processed_at IS NULL
        ORDER BY signed_at, id
        """
    }

    /// How much of a refused body is kept.
    public static let refusedBodyBytes = 512

    /// Deletes refused entries received before `before`, and the oldest beyond the newest `keeping`; returns how
    /// many went. Bounds what traffic nobody signed can leave behind, in age and in count.
    @discardableResult
    public func purgeRefusedInbound(before: Date, keeping: Int = 100_000) async throws -> Int {
        try await database.transaction(joining: write) { db in
            let old = try await db.sql(
                """
                DELETE FROM inbox WHERE verdict = 'refused' AND received_at < \(bind: before.millisecondsSince1970) RETURNING id
                """
            ).all().count
            let excess = try await db.sql(
                """
                DELETE FROM inbox WHERE verdict = 'refused' AND id <= (
                    SELECT id FROM inbox WHERE verdict = 'refused' ORDER BY id DESC LIMIT 1 OFFSET \(bind: keeping))
                RETURNING id
                """
            ).all().count
            return old + excess
        }
    }
}
