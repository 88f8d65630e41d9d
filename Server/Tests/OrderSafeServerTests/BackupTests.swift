import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerTestSupport
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// `ordersafe backup` and `restore`, and the scheduled backups: a snapshot taken while the server writes, checked
/// against its manifest, restored only into an empty place.
@Suite("Backups of the SQLite ledger: consistent while serving, checked, restored only where nothing lives")
struct BackupTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("ordersafe-backup-\(UUID().uuidString)")
    }

    static func settings(_ directory: URL, every: Int = 3600, keep: Int = 48) -> [String: String] {
        [
            "ORDERSAFE_DATABASE_URL": "sqlite:\(directory.path)/ordersafe.sqlite",
            "ORDERSAFE_BACKUP_EVERY_SECONDS": "\(every)", "ORDERSAFE_BACKUP_KEEP": "\(keep)",
            "ORDERSAFE_BACKUP_DIR": directory.appendingPathComponent("backups").path,
        ]
    }

    @Test(
        "taken while orders are written: the backup holds exactly the orders its manifest counts; restored elsewhere, the same"
    )
    func consistentWhileWriting() async throws {
        let directory = Self.folder()
        let backup = directory.appendingPathComponent("by-hand/ledger.sqlite")
        let restored = directory.appendingPathComponent("restored/ordersafe.sqlite").path
        try await TestServer.withComponents(extra: Self.settings(directory)) { client, components, clock in
            let token = try await TestServer.token("writer", lifetime: 86400)
            let writes = Task {
                for _ in 0..<40 { _ = try await TestServer.createOrder(client, token: token) }
            }
            try await Task.sleep(for: .milliseconds(20))
            let manifest = try await LedgerBackup.write(
                components.database, to: backup, now: clock.now(), logger: TestLog.logger)
            try await writes.value
            #expect(try LedgerBackup.verify(backup) == manifest)
            let restoredManifest = try await LedgerBackup.restore(backup, into: restored, logger: TestLog.logger)
            #expect(restoredManifest == manifest)
            let counted = try await LedgerDatabase.with(url: .sqliteFile(path: restored), logger: TestLog.logger) {
                database in
                try await database.read { db in
                    try await db.raw("SELECT COUNT(*) AS n FROM orders").first()?.decode(column: "n", as: Int64.self)
                }
            }
            #expect(counted == manifest.orders, "what the manifest says the backup holds")
            #expect((0...40).contains(manifest.orders))
        }
    }

    @Test("a restore never replaces a ledger, and refuses a backup whose bytes or manifest are not what was written")
    func restoreRefuses() async throws {
        let directory = Self.folder()
        let backup = directory.appendingPathComponent("b/ledger.sqlite")
        try await TestServer.withComponents(extra: Self.settings(directory)) { client, components, clock in
            _ = try await TestServer.createOrder(client, token: try await TestServer.token("someone"))
            _ = try await LedgerBackup.write(components.database, to: backup, now: clock.now(), logger: TestLog.logger)
            await #expect(throws: BackupError.destinationExists(backup.path)) {
                try await LedgerBackup.write(components.database, to: backup, now: clock.now(), logger: TestLog.logger)
            }
            let live = directory.appendingPathComponent("ordersafe.sqlite").path
            await #expect(throws: BackupError.ledgerExists(live)) {
                try await LedgerBackup.restore(backup, into: live, logger: TestLog.logger)
            }
        }
        // One byte flipped on the disk that kept it.
        var bytes = try Data(contentsOf: backup)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: backup)
        let elsewhere = directory.appendingPathComponent("fresh/ordersafe.sqlite").path
        await #expect(throws: BackupError.checksumMismatch(backup.path)) {
            try await LedgerBackup.restore(backup, into: elsewhere, logger: TestLog.logger)
        }
        #expect(!FileManager.default.fileExists(atPath: elsewhere), "nothing restored")
        try Data("{}".utf8).write(to: BackupManifest.url(of: backup))
        #expect(throws: BackupError.self) { try LedgerBackup.verify(backup) }
    }

    @Test(
        "scheduled: one when due (not again at a restart), the newest `keep` kept, shown on the Operations page, overdue past twice the interval"
    )
    func scheduled() async throws {
        let directory = Self.folder()
        let backups = directory.appendingPathComponent("backups")
        try await TestServer.withComponents(extra: Self.settings(directory, every: 600, keep: 2)) {
            client, components, clock in
            let schedule = try #require(components.backups)
            #expect(try await schedule.runDue() != nil, "none yet: one now")
            #expect(try await schedule.runDue() == nil, "not due again")
            for _ in 0..<3 {
                clock.advance(by: 601)
                _ = try await TestServer.createOrder(
                    client, token: try await TestServer.token("buyer", issuedAt: clock.now()))
                #expect(try await schedule.runDue() != nil)
            }
            let kept = BackupSchedule.kept(in: backups)
            #expect(kept.count == 2, "the newest two: \(kept.map(\.file.lastPathComponent))")
            #expect(kept.first?.manifest.createdAt == clock.now())
            for backup in kept { #expect(try LedgerBackup.verify(backup.file) == backup.manifest) }
            // A restart on the same folder knows its last backup: none is due before the interval.
            let restarted = BackupSchedule(
                settings: schedule.settings, database: components.database, clock: clock, logger: TestLog.logger)
            #expect(try await restarted.runDue() == nil)

            let console = ConsoleClient(client)
            try await console.signIn(TestServer.adminKey)
            let page = try await console.get("/admin/operations").html
            #expect(page.contains(#"id="backup-last""#) && !page.contains(#"id="backup-overdue""#))
            clock.advance(by: 1201)
            #expect(try await console.get("/admin/operations").html.contains(#"id="backup-overdue""#))
        }
    }
}
