import Crypto
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit

/// The ledger over SQL: one implementation for SQLite and PostgreSQL, of every role. Each part of the server takes
/// only the roles it uses (a channel's payments a composition such as `AlipayLedger`, the job runner a ``JobQueue``,
/// the webhook dispatcher a ``WebhookOutbox``, …); nothing is handed the whole ledger as one type.
public struct SQLLedger: LedgerTransactions, LedgerWrite, WebhookOutbox, StatementBook, OfferBook, AppPurchaseBook {
    let database: LedgerDatabase
    let products: ProductGrantsCache
    /// The write this ledger's calls are part of (``atomically(_:)`` hands its body such a ledger); nil: each call
    /// is a write or a read of its own.
    let write: (any SQLDatabase)?
    /// What runs once that write has committed (nil with `write`).
    private let committed: AfterCommit?

    public init(database: LedgerDatabase) {
        self.init(database: database, products: ProductGrantsCache(), write: nil, committed: nil)
    }

    private init(
        database: LedgerDatabase, products: ProductGrantsCache, write: (any SQLDatabase)?, committed: AfterCommit?
    ) {
        self.database = database
        self.products = products
        self.write = write
        self.committed = committed
    }

    /// Throws unless the database is at exactly this binary's schema version.
    /// Readiness: the schema holds at least this binary's migrations. Read only (a probe runs no DDL), and a newer
    /// schema is fine: during a rolling upgrade the new replicas migrate first and the old ones keep serving, since
    /// migrations only add.
    public func checkSchema() async throws {
        let current: Int
        do {
            current = try await Migrator(database: database, logger: .init(label: "ordersafe.ledger")).appliedVersion()
        } catch {
            throw LedgerError.schemaOutdated(database: 0, binary: Migrator.latestVersion)
        }
        if current < Migrator.latestVersion {
            throw LedgerError.schemaOutdated(database: current, binary: Migrator.latestVersion)
        }
    }

    public func atomically<R: Sendable>(_ body: @escaping @Sendable (any LedgerWrite) async throws -> R) async throws
        -> R
    {
        try await atomically(lockOrder: nil, body)
    }

    public func atomically<R: Sendable>(
        lockOrder: String?, _ body: @escaping @Sendable (any LedgerWrite) async throws -> R
    ) async throws -> R {
        let outermost = self.committed == nil
        let committed = self.committed ?? AfterCommit()
        let result = try await database.transaction(joining: write, lockOrder: lockOrder) {
            [database, products] db in
            // The writer runs a write's body again when another write of its group failed: only the jobs of the
            // run that commits are kept.
            if outermost { committed.reset() }
            return try await body(SQLLedger(database: database, products: products, write: db, committed: committed))
        }
        // Joined to a write that is still open: its jobs run when that one has committed.
        if outermost { await committed.run() }
        return result
    }

    public func afterCommit(_ job: @escaping @Sendable () async -> Void) async {
        if let committed {
            committed.append(job)
        } else {
            await job()
        }
    }

    public func saveCatalog(_ catalog: Catalog, at date: Date) async throws -> CatalogVersion {
        let document = try String(decoding: OrderSafeJSON.encoder().encode(catalog), as: UTF8.self)
        let sha = SHA256.hash(data: Data(document.utf8)).hexString
        let products = try catalog.products.map { product in
            (product, try String(decoding: OrderSafeJSON.encoder().encode(product), as: UTF8.self))
        }
        return try await database.transaction(joining: write) { db in
            let inserted = try await db.sql(
                """
                INSERT INTO catalog_versions (label, sha256, document, loaded_at)
                VALUES (\(bind: catalog.version), \(bind: sha), \(bind: document), \(bind: date.millisecondsSince1970))
                ON CONFLICT (sha256) DO NOTHING RETURNING id
                """
            ).first()
            if let inserted {
                let id = try inserted.decode(column: "id", as: Int64.self)
                for (product, definition) in products {
                    try await db.sql(
                        """
                        INSERT INTO products (catalog_version_id, product_id, kind, app_store_product_id, definition)
                        VALUES (\(bind: id), \(bind: product.id), \(bind: product.kind.rawValue),
                                \(bind: product.appStoreProductID), \(bind: definition))
                        """
                    ).run()
                }
                return CatalogVersion(id: id, label: catalog.version, sha256: sha)
            }
            guard let row = try await db.sql("SELECT id FROM catalog_versions WHERE sha256 = \(bind: sha)").first()
            else {
                throw LedgerCorruption(detail: "catalog \(sha) neither inserted nor found")
            }
            return CatalogVersion(id: try row.decode(column: "id", as: Int64.self), label: catalog.version, sha256: sha)
        }
    }

    public func createOrder(_ new: NewOrder, identity: @Sendable () -> OrderIdentity) async throws -> OrderCreation {
        for _ in 0..<5 {
            let candidate = identity()
            let outcome: OrderCreation? = try await database.transaction(joining: write) { db in
                if let id = try await db.insertedID(Self.orderInsert(new, as: candidate)) {
                    let order = Self.created(new, as: candidate)
                    LedgerDatabase.heldOrders(db)?.add(
                        .init(id: id, order: order, catalogVersionID: new.catalogVersionID))
                    try await Self.recordCreation(db, orderID: id, order, new)
                    return .created(order)
                }
                if let token = new.idempotency,
                    let row = try await db.sql(
                        """
                        SELECT order_no, request_sha256 FROM orders
                        WHERE user_id = \(bind: new.userID) AND idempotency_key = \(bind: token.key)
                        """
                    ).first()
                {
                    guard try row.decode(column: "request_sha256", as: String?.self) == token.requestSHA256 else {
                        throw LedgerError.idempotencyConflict(key: token.key)
                    }
                    let orderNo = try row.decode(column: "order_no", as: String.self)
                    return .replayed(try await Self.loadOrder(db, where: "order_no", orderNo)!)
                }
                return nil  // the random order number or UUID collided: try another
            }
            if let outcome { return outcome }
        }
        throw LedgerError.orderNumberExhausted
    }

    /// The statement inserting `new` as `identity` (``SQLDatabase/insertedID(_:)`` answers its id); nothing when the
    /// number, UUID or the user's idempotency key is taken. An order adopted with its payment is inserted with the payment's `status` and `sandbox`.
    static func orderInsert(
        _ new: NewOrder, as identity: OrderIdentity, status: OrderStatus = .created, updatedAt: Date? = nil,
        sandbox: Bool = false
    ) -> LedgerSQL {
        "INSERT INTO orders " + orderRow(new, as: identity, status: status, updatedAt: updatedAt, sandbox: sandbox)
            + " ON CONFLICT DO NOTHING"
    }

    /// The insert of an order whose id PostgreSQL reserved (``ReservedPayment``): a conflict fails it.
    static func orderInsert(
        _ new: NewOrder, as identity: OrderIdentity, id: Int64, status: OrderStatus, updatedAt: Date, sandbox: Bool
    ) -> LedgerSQL {
        "INSERT INTO orders "
            + orderRow(new, as: identity, status: status, updatedAt: updatedAt, sandbox: sandbox, id: id)
    }

    /// An order's columns and values, as `INSERT INTO orders` takes them; with the `id` PostgreSQL reserved for it.
    private static func orderRow(
        _ new: NewOrder, as identity: OrderIdentity, status: OrderStatus, updatedAt: Date?, sandbox: Bool,
        id: Int64? = nil
    ) -> LedgerSQL {
        let columns: LedgerSQL = """
            order_no, order_uuid, user_id, product_id, catalog_version_id, channel, status, amount_minor,
            currency, origin, idempotency_key, request_sha256, created_at, updated_at, sandbox)
            """
        let values: LedgerSQL = """
            \(bind: identity.orderNo), \(bind: identity.orderUUID.text(lowercase: true)), \(bind: new.userID),
            \(bind: new.productID), \(bind: new.catalogVersionID), \(bind: new.channel.rawValue), \(bind: status.rawValue),
            \(bind: new.amount.amountMinor), \(bind: new.amount.currency.code), \(bind: new.origin.rawValue),
            \(bind: new.idempotency?.key), \(bind: new.idempotency?.requestSHA256), \(bind: new.createdAt.millisecondsSince1970),
            \(bind: (updatedAt ?? new.createdAt).millisecondsSince1970), \(bind: sandbox))
            """
        guard let id else { return "(" + columns + " VALUES (" + values }
        return "(id, " + columns + " OVERRIDING SYSTEM VALUE VALUES (\(bind: id), " + values
    }

    /// `new` as created: the order its insert stored, to the millisecond.
    static func created(_ new: NewOrder, as identity: OrderIdentity) -> Order {
        let created = Date(millisecondsSince1970: new.createdAt.millisecondsSince1970)
        return Order(
            orderNo: identity.orderNo, orderUUID: identity.orderUUID, userID: new.userID, productID: new.productID,
            channel: new.channel,
            status: .created, amount: new.amount, createdAt: created, updatedAt: created)
    }

    /// What records an order's creation besides its row: its event, its webhook and its follow-up job.
    static func recordCreation(_ db: any SQLDatabase, orderID: Int64, _ order: Order, _ new: NewOrder) async throws {
        let cause: EventCause = new.origin == .api ? .app : .system
        try await appendEvent(
            db, orderID: orderID, kind: .created, from: nil, to: .created, cause: cause, evidence: nil,
            at: new.createdAt)
        try await emitWebhooks(db, orderID: orderID, states: [order], cause: cause, evidence: nil, at: new.createdAt)
        if let followUp = new.followUp {
            try await enqueue(
                NewJob(
                    kind: followUp.kind, key: order.orderNo, runAt: new.createdAt.addingTimeInterval(followUp.after)),
                db: db, at: new.createdAt)
        }
    }

    public func order(number: String) async throws -> Order? {
        try await database.read(joining: write) { db in try await Self.loadOrder(db, where: "order_no", number) }
    }

    public func order(uuid: UUID) async throws -> Order? {
        try await database.read(joining: write) { db in
            try await Self.loadOrder(db, where: "order_uuid", uuid.text(lowercase: true))
        }
    }

    public func events(orderNo: String) async throws -> [OrderEvent] {
        try await database.read(joining: write) { db in
            try await db.sql(
                """
                SELECT e.kind, e.from_status, e.to_status, e.cause, e.evidence, e.created_at
                FROM order_events e JOIN orders o ON o.id = e.order_id
                WHERE o.order_no = \(bind: orderNo) ORDER BY e.id
                """
            ).all().map { row in
                OrderEvent(
                    kind: OrderEventKind(rawValue: try row.decode(column: "kind", as: String.self)),
                    fromStatus: try row.decode(column: "from_status", as: String?.self).flatMap(
                        OrderStatus.init(rawValue:)),
                    toStatus: try row.decode(column: "to_status", as: String?.self).flatMap(
                        OrderStatus.init(rawValue:)),
                    cause: EventCause(rawValue: try row.decode(column: "cause", as: String.self)) ?? .system,
                    evidence: try row.decode(column: "evidence", as: String?.self),
                    createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)))
            }
        }
    }

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

    static func appendEvent(
        _ db: any SQLDatabase, orderID: Int64, kind: OrderEventKind, from: OrderStatus?, to: OrderStatus?,
        cause: EventCause,
        evidence: String?, at date: Date
    ) async throws {
        try await appendEvents(db, orderID: orderID, [(kind, from, to)], cause: cause, evidence: evidence, at: date)
    }

    /// Appends several events of one order, in order: inserted with the write's other events when it is done
    /// (``LedgerDatabase/insert(_:rows:on:)``).
    static func appendEvents(
        _ db: any SQLDatabase, orderID: Int64, _ events: [(kind: OrderEventKind, from: OrderStatus?, to: OrderStatus?)],
        cause: EventCause,
        evidence: String?, at date: Date
    ) async throws {
        guard !events.isEmpty else { return }
        let rows: [LedgerSQL] = events.map { event in
            """
            (\(bind: orderID), \(bind: event.kind.rawValue), \(bind: event.from?.rawValue), \(bind: event.to?.rawValue), \(bind: cause.rawValue),
             \(bind: evidence), \(bind: date.millisecondsSince1970))
            """
        }
        try await LedgerDatabase.insert(
            "INSERT INTO order_events (order_id, kind, from_status, to_status, cause, evidence, created_at) VALUES ",
            rows: rows, on: db)
    }

    /// Moves an order through `steps` (each a status and the kind of its event) with one update, one statement of
    /// events and one of webhook events, and returns the order as it is afterwards: what the caller loaded is passed
    /// on, not read again. `sandbox` marks it paid in a provider's test environment.
    /// `updated`: the caller has already run ``statusUpdate(orderID:to:sandbox:amount:at:)`` for the last step.
    static func advance(
        _ db: any SQLDatabase, orderID: Int64, _ order: Order, through steps: [(kind: OrderEventKind, to: OrderStatus)],
        sandbox: Bool = false,
        updated: Bool = false, cause: EventCause, evidence: String?, at date: Date
    ) async throws -> Order {
        guard let last = steps.last else { return order }
        let now = date.millisecondsSince1970
        if !updated {
            try await db.sql(statusUpdate(orderID: orderID, to: last.to, sandbox: sandbox, at: date)).run()
        }
        LedgerDatabase.orderChanged(id: orderID, on: db)
        var current = order
        current.updatedAt = Date(millisecondsSince1970: now)
        current.sandbox = current.sandbox || sandbox
        var events: [(kind: OrderEventKind, from: OrderStatus?, to: OrderStatus?)] = []
        var states: [Order] = []
        for step in steps {
            events.append((step.kind, current.status, step.to))
            current.status = step.to
            states.append(current)
        }
        try await appendEvents(db, orderID: orderID, events, cause: cause, evidence: evidence, at: date)
        try await emitWebhooks(db, orderID: orderID, states: states, cause: cause, evidence: evidence, at: date)
        return current
    }

    /// The statement that moves an order to `status` at `date`, marking it paid in a test environment when
    /// `sandbox` and setting its amount to `amount` (a price the provider set); it ends with its `WHERE`, which a
    /// caller may narrow.
    static func statusUpdate(
        orderID: Int64, to status: OrderStatus, sandbox: Bool, amount: Money? = nil, at date: Date
    ) -> LedgerSQL {
        var update: LedgerSQL =
            "UPDATE orders SET status = \(bind: status.rawValue), updated_at = \(bind: date.millisecondsSince1970)"
        if sandbox { update += ", sandbox = \(bind: true)" }
        if let amount {
            update += ", amount_minor = \(bind: amount.amountMinor), currency = \(bind: amount.currency.code)"
        }
        return update + " WHERE id = \(bind: orderID)"
    }

    static let orderColumns = OrderColumn.allCases.map(\.rawValue).joined(separator: ", ")

    /// ``orderColumns`` named as ``OrderColumns/named`` reads them: beside another table's columns in one row.
    static let namedOrderColumns = OrderColumn.allCases.map { "\($0.rawValue) AS named_\($0.rawValue)" }.joined(
        separator: ", ")

    static func loadOrder(
        _ db: any SQLDatabase, where column: String, _ value: some Encodable & Sendable, forUpdate: Bool = false
    )
        async throws -> Order?
    {
        try await loadOrderRow(db, where: column, value, forUpdate: forUpdate)?.order
    }

    /// The order and its row id, in one read.
    static func loadOrderRow(
        _ db: any SQLDatabase, where column: String, _ value: some Encodable & Sendable, forUpdate: Bool = false
    )
        async throws -> (id: Int64, order: Order, catalogVersionID: Int64)?
    {
        let lock = forUpdate && db.dialect.name == "postgresql" ? " FOR UPDATE" : ""
        guard
            let row = try await db.sql(
                """
                SELECT \(unsafeRaw: orderColumns) FROM orders WHERE \(ident: column) = \(bind: value)\(unsafeRaw: lock)
                """
            ).first()
        else { return nil }
        return try decodeOrderRow(row, .plain)
    }

    /// The order, its row id and its catalog version, read by `columns`' names.
    static func decodeOrderRow(_ row: any SQLRow, _ columns: OrderColumns) throws -> (
        id: Int64, order: Order, catalogVersionID: Int64
    ) {
        (
            try row.decode(column: columns[.id], as: Int64.self), try decodeOrder(row, columns),
            try row.decode(column: columns[.catalogVersionID], as: Int64.self)
        )
    }

    static func decodeOrder(_ row: any SQLRow) throws -> Order {
        try decodeOrder(row, .plain)
    }

    static func decodeOrder(_ row: any SQLRow, _ columns: OrderColumns) throws -> Order {
        let uuidText = try row.decode(column: columns[.orderUUID], as: String.self)
        guard let uuid = UUID(uuidString: uuidText),
            let channel = Channel(rawValue: try row.decode(column: columns[.channel], as: String.self)),
            let status = OrderStatus(rawValue: try row.decode(column: columns[.status], as: String.self)),
            let currency = CurrencyCode(try row.decode(column: columns[.currency], as: String.self))
        else { throw LedgerCorruption(detail: "order row \(uuidText) has a value this build does not know") }
        return Order(
            orderNo: try row.decode(column: columns[.orderNo], as: String.self), orderUUID: uuid,
            userID: try row.decode(column: columns[.userID], as: String.self),
            productID: try row.decode(column: columns[.productID], as: String.self), channel: channel, status: status,
            amount: Money(
                amountMinor: try row.decode(column: columns[.amountMinor], as: Int64.self), currency: currency),
            createdAt: Date(millisecondsSince1970: try row.decode(column: columns[.createdAt], as: Int64.self)),
            updatedAt: Date(millisecondsSince1970: try row.decode(column: columns[.updatedAt], as: Int64.self)),
            sandbox: try row.decode(column: columns[.sandbox], as: Bool.self))
    }

    /// An order's columns, as the table names them.
    enum OrderColumn: String, CaseIterable {
        case id
        case orderNo = "order_no"
        case orderUUID = "order_uuid"
        case userID = "user_id"
        case productID = "product_id"
        case catalogVersionID = "catalog_version_id"
        case channel, status
        case amountMinor = "amount_minor"
        case currency
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case sandbox
    }

    /// The names an order's columns are read by in a row: the table's own (``orderColumns``), or with `named_` before
    /// each (``namedOrderColumns``, a lookup's named order).
    struct OrderColumns: Sendable {
        private let names: [OrderColumn: String]

        static let plain = OrderColumns(prefix: "")
        static let named = OrderColumns(prefix: "named_")

        private init(prefix: String) {
            names = Dictionary(uniqueKeysWithValues: OrderColumn.allCases.map { ($0, prefix + $0.rawValue) })
        }

        subscript(_ column: OrderColumn) -> String { names[column] ?? column.rawValue }
    }
}

/// A stored row this build cannot interpret: a fault, never an input error.
struct LedgerCorruption: Error, CustomStringConvertible {
    var detail: String
    var description: String { "ledger data is inconsistent: \(detail)" }
}

extension Sequence<UInt8> {
    /// Lower-case hexadecimal (one `String(format:)` per byte cost 6% of a submission's time in the profile).
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
