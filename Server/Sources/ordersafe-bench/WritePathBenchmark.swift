import Engine
import Foundation
import Ledger
import Logging
import OrderSafeModel

/// The ledger's write path alone, without HTTP or verification: what one App Store submission writes (its inbox
/// entry, an order adopted with its payment and grant, the events and webhook rows, the entry's verdict, as one
/// write) from many concurrent submitters, per group size (how many writes one transaction may gather; 1 commits each alone), beside
/// the raw rate of `fsync` on the same disk measured in the same run: each commit costs at least one.
///
/// `ordersafe-bench writes [--database URL] [--submissions N] [--concurrency C]` (default: SQLite in a new folder
/// per group size, 4,000 submissions, 64 at once).
enum WritePathBenchmark {
    static let catalogJSON = """
        {"version": "bench", "products": [{"id": "coins_60", "kind": "consumable", "title": "60 Coins",
         "app_store_product_id": "com.example.ordersafe.coins60",
         "prices": {"appstore": {"amount_minor": 600, "currency": "CNY"}},
         "grants": [{"type": "add_balance", "balance": "coins", "amount": 60}]}]}
        """

    static func run(_ arguments: [String]) async throws -> Bool {
        let value = { (flag: String) in flagValue(flag, in: arguments) }
        let submissions = Int(value("--submissions") ?? "4000") ?? 4000
        let concurrency = Int(value("--concurrency") ?? "64") ?? 64
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ordersafe-bench-writes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var logger = Logger(label: "ordersafe.bench")
        logger.logLevel = .warning

        print("ledger write path: \(submissions) App Store submissions, \(concurrency) at once (release build)")
        report(
            "raw fsync of 4 KiB on \(value("--database") == nil ? "the database's disk" : "this machine's temp disk")",
            try rawFsyncRate(in: folder), unit: "fsync/s")
        var results: [(Int, Double)] = []
        for groupSize in [1, 8, 64] {
            let url =
                try value("--database").map(DatabaseURL.init(parsing:))
                ?? .sqliteFile(path: folder.appendingPathComponent("g\(groupSize).sqlite").path)
            let database = try LedgerDatabase(url: url, maxGroupSize: groupSize, logger: logger)
            _ = try await Migrator(database: database, logger: logger).migrate()
            let ledger = SQLLedger(database: database)
            let version = try await ledger.saveCatalog(try Catalog(json: Data(catalogJSON.utf8)), at: Date())
            let run = UUID().uuidString.prefix(8).lowercased()
            let start = ContinuousClock.now
            // Each write carries its user as its key, as the server's submissions do, so that PostgreSQL's groups on
            // parallel lanes lock users' rows in one order; a write that fails all the same (a deadlock the writer's
            // rerun alone met again) is submitted again, and counted.
            let retriesAllowed = database.engine == .postgres ? 5 : 0
            let retried = try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<concurrency {
                    group.addTask {
                        var retried = 0
                        for index in stride(from: worker, to: submissions, by: concurrency) {
                            for attempt in 0...retriesAllowed {
                                do {
                                    try await submit(
                                        index, run: String(run), ledger: ledger, catalogVersion: version.id)
                                    break
                                } catch  where attempt < retriesAllowed {
                                    retried += 1
                                }
                            }
                        }
                        return retried
                    }
                }
                return try await group.reduce(0, +)
            }
            let perSecond = Double(submissions) / ((ContinuousClock.now - start).milliseconds / 1000)
            results.append((groupSize, perSecond))
            report(
                "submissions, at most \(groupSize) writes per commit (\(database.engine.rawValue))", perSecond,
                unit: "submissions/s")
            if retried > 0 { print("  \(retried) writes failed (deadlocks) and were submitted again") }
            try await database.shutdown()
        }
        if let alone = results.first?.1, let grouped = results.last?.1 {
            print(String(format: "  ratio, groups of 64 to commits alone: %.2f", grouped / alone))
        }
        return true
    }

    /// The ledger calls of one new App Store submission, in the engine's order, as one write (as the server makes them).
    private static func submit(_ index: Int, run: String, ledger: SQLLedger, catalogVersion: Int64) async throws {
        try await ledger.atomically(lockOrder: user(index)) { ledger in
            try await write(index, run: run, ledger: ledger, catalogVersion: catalogVersion)
        }
    }

    /// The user submission `index` is for: a thousand of them, in turn.
    private static func user(_ index: Int) -> String { "bench-\(index % 1000)" }

    /// Order identities made as the server makes them, inside the write (`UUID()` opened `/dev/urandom` on the writer's
    /// thread at each submission, 1.6% of this benchmark's samples, which the server does not).
    private static let identities = OrderIdentityGenerator(clock: SystemClock())

    private static func write(_ index: Int, run: String, ledger: any LedgerWrite, catalogVersion: Int64) async throws {
        let now = Date()
        let user = user(index)
        let transaction = "bench-\(run)-\(index)"
        let price = Money(amountMinor: 600, currency: .cny)
        let entry = try await ledger.storeInbound(
            InboundSignal(
                channel: .appStore, kind: .submission, headers: ["user_id": user],
                body: Array(#"{"signed_transaction":"\#(transaction)"}"#.utf8), receivedAt: now))
        // An order number holds 20 random bits a millisecond: at this rate two orders of one millisecond share one in
        // about fifteen runs of 20,000. The adoption then inserts nothing and another number is drawn, as the
        // server's createOrder does (the server then creates the order apart).
        for _ in 0..<5 {
            let identity = identities.next(for: user)
            let adopted = try await ledger.fulfil(
                VerifiedPayment(
                    channel: .appStore, providerTransactionID: transaction, orderNo: identity.orderNo, amount: price,
                    cause: .app,
                    evidence: "inbox:\(entry.id)", sandbox: true, originalTransactionID: transaction),
                adopting: NewOrder(
                    userID: user, productID: "coins_60", channel: .appStore, amount: price,
                    catalogVersionID: catalogVersion,
                    origin: .adopted,
                    idempotency: IdempotencyToken(key: "appstore:\(transaction)", requestSHA256: "adopted"),
                    createdAt: now),
                as: identity, at: now)
            if adopted != nil {
                return try await ledger.finishInbound(id: entry.id, verdict: .applied, note: nil, at: now)
            }
        }
        throw BenchmarkError.notAdopted(transaction)
    }

    /// 4 KiB written and `fsync`ed at the start of a file in `folder`, for about a second.
    private static func rawFsyncRate(in folder: URL) throws -> Double {
        let path = folder.appendingPathComponent("fsync-probe").path
        let descriptor = open(path, O_CREAT | O_WRONLY, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer {
            close(descriptor)
            unlink(path)
        }
        let page = [UInt8](repeating: 0x5A, count: 4096)
        var count = 0
        let start = ContinuousClock.now
        while (ContinuousClock.now - start).milliseconds < 1000 {
            guard page.withUnsafeBytes({ pwrite(descriptor, $0.baseAddress, $0.count, 0) }) == page.count,
                fsync(descriptor) == 0
            else {
                throw CocoaError(.fileWriteUnknown)
            }
            count += 1
        }
        return Double(count) / ((ContinuousClock.now - start).milliseconds / 1000)
    }
}

/// A benchmark write that did not do what the server's does.
enum BenchmarkError: Error, CustomStringConvertible {
    case notAdopted(String)

    var description: String {
        switch self {
        case .notAdopted(let transaction):
            "transaction \(transaction) was not adopted with its payment under five order numbers (recorded before?)"
        }
    }
}
