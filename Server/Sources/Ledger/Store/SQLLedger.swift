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
