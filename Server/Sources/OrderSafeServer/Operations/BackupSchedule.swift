import Foundation
import Ledger
import Logging
import Metrics
import OrderSafeModel
import Synchronization

/// The scheduled backups of an SQLite ledger: one whenever the last good one is `backup.every_seconds` old, into
/// `backup.dir`, the newest `backup.keep` kept; and what the console and the metrics say of the last good one
/// (`ordersafe_backup_last_success_timestamp_seconds`, `ordersafe_backup_failures_total`).
final class BackupSchedule: Sendable {
    let settings: Settings.Backup
    let database: LedgerDatabase
    let clock: any WallClock
    let logger: Logger
    private let state: Mutex<State>

    struct State {
        var last: BackupManifest?
        var failure: (at: Date, reason: String)?
    }

    /// What the console shows: the last good backup, its age, and the last failure since.
    struct Status: Sendable {
        var last: BackupManifest?
        var failure: (at: Date, reason: String)?
        /// Older than twice the interval (or none while one was due): the console warns.
        var overdue: Bool
    }

    /// The schedule, knowing the last good backup already in the folder (a restart does not make a new one early).
    init(settings: Settings.Backup, database: LedgerDatabase, clock: any WallClock, logger: Logger) {
        self.settings = settings
        self.database = database
        self.clock = clock
        self.logger = logger
        state = Mutex(State(last: Self.kept(in: URL(fileURLWithPath: settings.directory)).first?.manifest))
        if let last = state.withLock({ $0.last }) { Self.report(last) }
    }

    var status: Status {
        let now = clock.now()
        return state.withLock { state in
            let age = state.last.map { now.timeIntervalSince($0.createdAt) } ?? .infinity
            return Status(
                last: state.last, failure: state.failure, overdue: age > 2 * TimeInterval(settings.everySeconds))
        }
    }

    /// Backs up when the last good backup is `every` old (or there is none), then prunes. Returns a summary when it
    /// backed up, nil when none was due.
    func runDue() async throws -> String? {
        let now = clock.now()
        if let last = state.withLock({ $0.last }),
            now.timeIntervalSince(last.createdAt) < TimeInterval(settings.everySeconds)
        {
            return nil
        }
        let file = LedgerBackup.file(in: URL(fileURLWithPath: settings.directory), at: now)
        let manifest: BackupManifest
        do {
            manifest = try await LedgerBackup.write(database, to: file, now: now, logger: logger)
        } catch {
            Counter(label: "ordersafe_backup_failures_total").increment()
            state.withLock { $0.failure = (now, "\(error)") }
            throw error
        }
        state.withLock {
            $0.last = manifest
            $0.failure = nil
        }
        Self.report(manifest)
        let pruned = prune()
        return "\(file.lastPathComponent): \(manifest.orders) orders, last event \(manifest.lastEventID)"
            + (pruned > 0 ? "; \(pruned) older removed" : "")
    }

    /// Removes the scheduled backups beyond the newest `keep` (and their manifests). Returns how many went.
    @discardableResult
    func prune() -> Int {
        let kept = Self.kept(in: URL(fileURLWithPath: settings.directory))
        var removed = 0
        for backup in kept.dropFirst(settings.keep) {
            try? FileManager.default.removeItem(at: backup.file)
            try? FileManager.default.removeItem(at: BackupManifest.url(of: backup.file))
            removed += 1
        }
        return removed
    }

    /// The scheduled backups in `directory` with a readable manifest, newest first.
    static func kept(in directory: URL) -> [(file: URL, manifest: BackupManifest)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix("ordersafe-") && $0.hasSuffix(".sqlite") }.compactMap { name in
            let file = directory.appendingPathComponent(name)
            return (try? BackupManifest.read(BackupManifest.url(of: file))).map { (file, $0) }
        }.sorted { $0.manifest.createdAt > $1.manifest.createdAt }
    }

    private static func report(_ manifest: BackupManifest) {
        Gauge(label: "ordersafe_backup_last_success_timestamp_seconds").record(
            manifest.createdAt.timeIntervalSince1970.rounded(.down))
    }
}
