import ChannelSupport
import Engine
import Foundation
import Ledger
import Logging
@_spi(OrderSafeServer) import OrderSafeModel
import SQLKit
import Sandbox
import WeChatPay

/// A day's WeChat Pay trade bill of `--lines` payments (1,000,000 by default), gzipped as it is downloaded, read and
/// compared with a ledger holding the same payments, in a process of its own so that its peak memory is the day's
/// alone: time and peak memory of each step, beside the primitive under it measured in the same run (zlib inflating
/// the file and a scan of its bytes for line breaks; the ledger's lookup of one payment by transaction id).
///
/// `ordersafe-bench statements [--lines N] [--database URL] [--catalog FILE]` (SQLite in a temporary folder by default);
/// `--channel alipay`: Alipay's zipped GBK bill read instead (``AlipayBillBenchmark``).
enum StatementBenchmark {
    static func run(_ arguments: [String]) async throws -> Bool {
        let value = { (flag: String) in flagValue(flag, in: arguments) }
        let lines = Int(value("--lines") ?? "1000000") ?? 1_000_000
        if value("--channel") == "alipay" { return try AlipayBillBenchmark.run(lines: lines) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ordersafe-statements-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = value("--database") ?? "sqlite:\(folder.path)/ledger.sqlite"
        let catalogFile = value("--catalog") ?? "Sources/OrderSafeServer/Resources/catalog.example.json"
        print("statement of \(lines) payments (one core, release build)")

        let start = ContinuousClock.now
        let plain = bill(lines: lines, day: day)
        let gzipped = Zlib.deflate(plain, wrapping: .gzip)
        let billFile = folder.appendingPathComponent("bill.csv.gz")
        try Data(gzipped).write(to: billFile)
        print(
            String(
                format: "  the file: %.1f MB, %.1f MB gzipped, written in %.1f s", Double(plain.count) / 1e6,
                Double(gzipped.count) / 1e6, seconds(since: start)))

        var logger = Logger(label: "ordersafe.bench")
        logger.logLevel = .warning
        let ledgerDatabase = try LedgerDatabase(
            url: try DatabaseURL(parsing: database), maxConnectionsPerEventLoop: 2, logger: logger)
        _ = try await Migrator(database: ledgerDatabase, logger: logger).migrate()
        let ledger = SQLLedger(database: ledgerDatabase)
        let catalog = try Catalog(json: try Data(contentsOf: URL(fileURLWithPath: catalogFile)))
        let version = try await ledger.saveCatalog(catalog, at: Date())
        let seedStart = ContinuousClock.now
        try await seed(ledgerDatabase, version: version, lines: lines, dayStart: day.start(utcOffset: 8 * 3600))
        try await ledgerDatabase.shutdown()
        print(String(format: "  the ledger: %d payments seeded in %.1f s", lines, seconds(since: seedStart)))

        // The day itself, in a fresh process: what it holds is what reading and comparing a day takes.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["statements-day", billFile.path, database, String(lines)]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        print(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self), terminator: "")
        child.waitUntilExit()
        return child.terminationStatus == 0
    }

    /// The day of ``run(_:)``: `ordersafe-bench statements-day BILL DATABASE LINES`.
    static func measureDay(_ arguments: [String]) async throws -> Bool {
        guard arguments.count == 3, let lines = Int(arguments[2]) else { return false }
        let file = WeChatPayBillFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: arguments[0]))), gzip: true)
        let memoryBefore = peakMemoryMB()

        let inflateStart = ContinuousClock.now
        var breaks = 0
        let pieces = try file.pieces()
        while let piece = try pieces() {
            for byte in piece where byte == 0x0A { breaks += 1 }
        }
        let inflate = seconds(since: inflateStart)
        let parseStart = ContinuousClock.now
        let statement = try WeChatPayPayments.statement(file, day: day, merchantID: merchantID, appID: appID)
        let parse = seconds(since: parseStart)
        guard statement.entries.count == lines, breaks == lines + 3 else {
            print("  the parser read \(statement.entries.count) of \(lines) rows")
            return false
        }
        report("zlib inflating the gzip and scanning for line breaks", Double(lines) / inflate, unit: "lines/s")
        report("inflate, parse and check (rows, totals) a row at a time", Double(lines) / parse, unit: "lines/s")
        print(
            String(
                format: "  ratio to inflating alone: %.3f; peak memory %.0f MB (the gzip read) → %.0f MB",
                inflate / parse,
                memoryBefore, peakMemoryMB()))

        var logger = Logger(label: "ordersafe.bench")
        logger.logLevel = .warning
        return try await LedgerDatabase.with(
            url: try DatabaseURL(parsing: arguments[1]), maxConnectionsPerEventLoop: 2, logger: logger
        ) { database in
            let ledger = SQLLedger(database: database)
            let sample = min(lines, 50_000)
            let lookupStart = ContinuousClock.now
            for index in 0..<sample {
                guard try await ledger.payment(channel: .wechatPay, providerTransactionID: transactionID(index)) != nil
                else { fatalError("seeded payment \(index) missing") }
            }
            let lookups = Double(sample) / seconds(since: lookupStart)
            let reconciler = StatementReconciler(
                ledger: ledger, sources: [.wechatPay: Published(statement: statement)], clock: SystemClock(),
                logger: logger)
            let compareStart = ContinuousClock.now
            let result = try await reconciler.reconcile(.wechatPay, day: day)
            let compare = seconds(since: compareStart)
            report("the ledger's lookup of one payment (sample)", lookups, unit: "lines/s")
            report("compare the day (statement ↔ ledger, both ways)", Double(lines) / compare, unit: "lines/s")
            print(
                String(
                    format:
                        "  ratio to the lookup alone: %.2f; %.1f s for the day; matched %d, flagged %d; peak memory %.0f MB",
                    Double(lines) / compare / lookups, compare, result.matched.count, result.flagged.count,
                    peakMemoryMB()))
            return result.matched.count == lines && result.flagged.count == 0
        }
    }

    static let day = StatementDay("2026-11-25")!
    static let merchantID = "1900000001"
    static let appID = "wx0000000000bench"

    static func orderNo(_ index: Int) -> String { "BN\(index + 1)" }
    static func transactionID(_ index: Int) -> String { "TXBN\(index + 1)" }

    /// The day's ALL trade bill in WeChat Pay's format: `lines` payments of 99.00 (fee 0.59), then the summary.
    static func bill(lines: Int, day: StatementDay) -> [UInt8] {
        var bytes = Array((SandboxWeChatPay.billHeader + "\r\n").utf8)
        bytes.reserveCapacity(lines * 260)
        for index in 0..<lines {
            let second = index % 86400
            let time = String(
                format: "%@ %02d:%02d:%02d", day.description, second / 3600, second / 60 % 60, second % 60)
            let fields = [
                time, appID, merchantID, "0", "", transactionID(index), orderNo(index), "oBenchPayer", "APP", "SUCCESS",
                "OTHERS", "CNY", "99.00", "0.00", "0", "0", "0.00", "0.00", "", "", "礼盒 Gift box", "", "0.59", "0.60%",
                "99.00", "0.00", "",
            ]
            bytes += Array((fields.map { "`" + $0 }.joined(separator: ",") + "\r\n").utf8)
        }
        let yuan = { (fen: Int) in String(format: "%d.%02d", fen / 100, fen % 100) }
        bytes += Array((SandboxWeChatPay.billSummaryHeader + "\r\n").utf8)
        let summary = [String(lines), yuan(lines * 9900), "0.00", "0.00", yuan(lines * 59), yuan(lines * 9900), "0.00"]
        bytes += Array((summary.map { "`" + $0 }.joined(separator: ",") + "\r\n").utf8)
        return bytes
    }

    /// The same payments in the ledger, recorded during the day: orders and payments in bulk, generated by the
    /// database (a recursive CTE on SQLite, `generate_series` on PostgreSQL), 100,000 a transaction.
    static func seed(_ database: LedgerDatabase, version: CatalogVersion, lines: Int, dayStart: Date) async throws {
        let postgres = database.engine == .postgres
        let uuid =
            postgres
            ? "'00000000-0000-4000-8000-' || lpad(n::text, 12, '0')" : "printf('00000000-0000-4000-8000-%012d', n)"
        let base = dayStart.millisecondsSince1970
        let columns = """
            'BN' || n, \(uuid), 'bench-user-' || (n % 20000), 'gift_box', \(version.id), 'wechatpay', 'fulfilled', 9900,
            'CNY', 'api', \(base) + n, \(base) + n
            """
        let insert =
            "INSERT INTO orders (order_no, order_uuid, user_id, product_id, catalog_version_id, channel, status, amount_minor, currency, origin, created_at, updated_at)"
        var first = 1
        while first <= lines {
            let last = min(first + 99_999, lines)
            let statement =
                postgres
                ? "\(insert) SELECT \(columns) FROM generate_series(\(first), \(last)) AS seq(n)"
                : "\(insert) WITH RECURSIVE seq(n) AS (SELECT \(first) UNION ALL SELECT n + 1 FROM seq WHERE n < \(last)) SELECT \(columns) FROM seq"
            let batchFirst = first
            try await database.transaction { db in
                try await db.raw(SQLQueryString(statement)).run()
                try await db.raw(
                    """
                    INSERT INTO payment_transactions (channel, provider_txn_id, order_id, user_id, amount_minor, currency, cause, evidence, recorded_at)
                    SELECT channel, 'TX' || order_no, id, user_id, amount_minor, currency, 'notification', 'bench', created_at + 1000
                    FROM orders WHERE id >= (SELECT id FROM orders WHERE order_no = \(bind: "BN\(batchFirst)"))
                    """
                ).run()
            }
            first = last + 1
        }
        try await database.withSession { db in try await db.raw("ANALYZE").run() }
    }

    /// The statement as published, for the comparison alone.
    struct Published: StatementSource {
        let statement: ProviderStatement
        var utcOffset: Int { 8 * 3600 }
        func statement(of day: StatementDay) async throws -> StatementAvailability { .published(statement) }
        func paymentDay(of payment: RecordedPayment) async throws -> ProviderPayment { .notPaid }
        func refundDay(of payment: RecordedPayment) async throws -> ProviderRefund { .notRefunded }
        func recoverPayment(_ entry: StatementEntry, evidence: String) async throws -> PaymentRecovery {
            .noOrder("the benchmark's ledger holds every line")
        }
        func recoverRefund(_ entry: StatementEntry, of payment: RecordedPayment, evidence: String) async throws -> Bool
        {
            false
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).milliseconds / 1000
    }

    /// The process's peak resident memory so far, in MB: Linux's `VmHWM` (of this program alone: `ru_maxrss`
    /// carries the parent's peak across `exec`, proc(5) and getrusage(2)), else `ru_maxrss`.
    static func peakMemoryMB() -> Double {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        {
            return kilobytes / 1024
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }
}
