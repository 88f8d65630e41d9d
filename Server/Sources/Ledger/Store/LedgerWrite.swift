import Synchronization

/// One write of the ledger as the work inside it sees it (``LedgerTransactions/atomically(_:)``): the roles a
/// recording reads and writes, each call joining the write's transaction, and ``afterCommit(_:)`` for what must
/// wait until the write is durable (a provider's API, another signal). It opens no transaction of its own and leads
/// back to no ledger outside, so a step handed one can only be part of its write.
///
/// The ledger itself is also a `LedgerWrite`, each of whose calls is a write of its own: a recording made outside
/// any transaction (a notification, a history pull) is handed the ledger, and its `afterCommit` runs the job at
/// once. A step never holds two ledgers.
public protocol LedgerWrite: OrderBook & SignalInbox & JobQueue & SubscriptionBook & HoldingsReader {
    /// Runs `job` once the write has committed, in the order asked, before ``LedgerTransactions/atomically(_:)``
    /// returns; never when the write fails. Outside a transaction, at once.
    func afterCommit(_ job: @escaping @Sendable () async -> Void) async
}

/// Opens the ledger's writes.
public protocol LedgerTransactions: Sendable {
    /// Runs `body` as one transaction: every call on the ``LedgerWrite`` it gets joins it, and it returns once all
    /// of them have committed together (or none has, when it throws), after the jobs `body` queued with
    /// ``LedgerWrite/afterCommit(_:)`` have run. `body` runs on the ledger's writer: it must do only ledger work and
    /// never wait for a provider or the network (that is what `afterCommit` is for).
    func atomically<R: Sendable>(_ body: @escaping @Sendable (any LedgerWrite) async throws -> R) async throws -> R
    /// ``atomically(_:)``, its locks taken in the order of `lockOrder` among the writes it shares a transaction with.
    func atomically<R: Sendable>(
        lockOrder: String?, _ body: @escaping @Sendable (any LedgerWrite) async throws -> R
    ) async throws -> R
}

/// The jobs a write queued to run once it has committed.
final class AfterCommit: Sendable {
    private let jobs = Mutex<[@Sendable () async -> Void]>([])

    func append(_ job: @escaping @Sendable () async -> Void) {
        jobs.withLock { $0.append(job) }
    }

    func run() async {
        for job in jobs.withLock({ $0 }) { await job() }
    }

    /// Forgets the jobs queued: the write's body runs again, in another transaction, and queues its own again.
    func reset() {
        jobs.withLock { $0.removeAll() }
    }
}
