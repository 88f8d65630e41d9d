import Foundation
import Ledger
import Logging
import NIOPosix
import PostgresKit
import SQLKit

/// What a PostgreSQL round trip costs on this side of the socket, from `C` callers at once: a prepared `SELECT`
/// through postgres-nio's own prepared-statement API on `C` connections (the peer: what a server written on
/// postgres-nio alone pays, its statement prepared once per connection), the same `SELECT` as the ledger reads (its
/// pool, its prepared statements, SQLKit's rows), and as the ledger writes it (the group-commit writer: the statement,
/// then `COMMIT AND CHAIN` when writes wait, else `BEGIN` before and `COMMIT` after). CPU is this process's own (user
/// and system, `getrusage`): PostgreSQL's is not counted.
///
/// `ordersafe-bench roundtrips --database postgres://… [--seconds S] [--concurrency C]` (default 5 s each, 8 at once,
/// as each replica of `scripts/load-ab` is driven).
enum RoundTripBenchmark {
    /// The statement each way runs.
    struct Echo: PostgresPreparedStatement {
        static let sql = "SELECT $1::int8 AS n"
        typealias Row = Int64
        let value: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(value)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }

    static func run(_ arguments: [String]) async throws -> Bool {
        let value = { (flag: String) in flagValue(flag, in: arguments) }
        guard let url = value("--database"), url.hasPrefix("postgres") else {
            print("usage: ordersafe-bench roundtrips --database postgres://… [--seconds S] [--concurrency C]")
            return false
        }
        let seconds = Int(value("--seconds") ?? "5") ?? 5
        let concurrency = max(1, Int(value("--concurrency") ?? "8") ?? 8)
        let logger = {
            var logger = Logger(label: "ordersafe.bench")
            logger.logLevel = .warning
            return logger
        }()
        print("PostgreSQL round trips, \(concurrency) callers at once, \(seconds) s each (release build)")

        let configuration = try SQLPostgresConfiguration(url: url).coreConfiguration
        var opened: [PostgresConnection] = []
        for id in 0..<concurrency {
            opened.append(
                try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: id,
                    logger: logger))
        }
        let connections = opened
        let peer = try await measure("postgres-nio, a prepared SELECT", seconds: seconds, callers: concurrency) {
            caller, index in
            for try await row in try await connections[caller].execute(Echo(value: index), logger: logger) {
                guard row == index else { throw BenchmarkError.wrongAnswer(row, index) }
            }
        }
        for connection in connections { try await connection.close() }

        let database = try LedgerDatabase(url: try DatabaseURL(parsing: url), logger: logger)
        let read = try await measure("the ledger's read of it", seconds: seconds, callers: concurrency) {
            _, index in
            let row = try await database.read { db in try await db.raw("SELECT \(bind: index)::int8 AS n").first() }
            guard let row, try row.decode(column: "n", as: Int64.self) == index else {
                throw BenchmarkError.wrongAnswer(nil, index)
            }
        }
        let write = try await measure("the ledger's write of it", seconds: seconds, callers: concurrency) {
            _, index in
            let answer = try await database.transaction { db in
                try await db.raw("SELECT \(bind: index)::int8 AS n").first()?.decode(column: "n", as: Int64.self)
            }
            guard answer == index else { throw BenchmarkError.wrongAnswer(answer, index) }
        }
        try await database.shutdown()

        print(
            String(
                format: "  a read's CPU ×%.2f postgres-nio's; a write's (two or three round trips) ×%.2f", read / peer,
                write / peer))
        return true
    }

    /// Runs `operation` from `callers` tasks for `seconds`, each caller numbering its calls; prints the rate and this
    /// process's CPU a call, and returns the CPU a call in microseconds.
    static func measure(
        _ name: String, seconds: Int, callers: Int,
        _ operation: @escaping @Sendable (_ caller: Int, _ index: Int64) async throws -> Void
    ) async throws -> Double {
        // A warm-up: connections opened, statements prepared.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                group.addTask { for index in 0..<Int64(50) { try await operation(caller, index) } }
            }
            try await group.waitForAll()
        }
        let deadline = ContinuousClock.now + .seconds(seconds)
        let (start, cpuBefore) = (ContinuousClock.now, processCPUMicroseconds())
        let calls = try await withThrowingTaskGroup(of: Int.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    var index: Int64 = 0
                    while ContinuousClock.now < deadline {
                        try await operation(caller, index)
                        index += 1
                    }
                    return Int(index)
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = start.duration(to: .now)
        let cpu = Double(processCPUMicroseconds() - cpuBefore) / Double(max(calls, 1))
        let rate = Double(calls) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        print(
            name.padding(toLength: 36, withPad: " ", startingAt: 0),
            String(format: "%9.0f/s   CPU %6.1f µs a call", rate, cpu))
        return cpu
    }

    /// This process's CPU time so far, user and system, in microseconds.
    static func processCPUMicroseconds() -> Int64 {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return (Int64(usage.ru_utime.tv_sec) + Int64(usage.ru_stime.tv_sec)) * 1_000_000
            + Int64(usage.ru_utime.tv_usec) + Int64(usage.ru_stime.tv_usec)
    }

    enum BenchmarkError: Error, CustomStringConvertible {
        case wrongAnswer(Int64?, Int64)

        var description: String {
            switch self {
            case .wrongAnswer(let answer, let asked):
                "the SELECT of \(asked) answered \(answer.map(String.init) ?? "no row")"
            }
        }
    }
}
