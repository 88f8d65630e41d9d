import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL cluster the restore drill may destroy: its write-ahead log archived to a folder beside it
/// (`archive_command`, the setup docs/production.md describes), backed up with `pg_basebackup`, killed, and started
/// again from the base backup — with the archive replayed to its end (point-in-time recovery) or without it.
///
/// Runs PostgreSQL's own tools from `ORDERSAFE_TEST_POSTGRES_BIN` (scripts/test sets it to the cluster's `bin`
/// folder); as root, through `runuser -u postgres`, as PostgreSQL refuses root.
struct DrillPostgresCluster: Sendable {
    static let binFolder = ProcessInfo.processInfo.environment["ORDERSAFE_TEST_POSTGRES_BIN"]

    let bin: String
    let folder: String
    let port: Int

    var data: String { folder + "/data" }
    var archive: String { folder + "/archive" }
    var base: String { folder + "/base" }
    /// A superuser URL to the cluster's `postgres` database.
    var url: String { "postgres://ordersafe@127.0.0.1:\(port)/postgres?sslmode=disable" }

    /// Makes and starts a cluster archiving its log (`archive_timeout` 1 s: the recovery point of this setup).
    static func start(in folder: String) throws -> DrillPostgresCluster {
        let bin = try #require(binFolder, "ORDERSAFE_TEST_POSTGRES_BIN names PostgreSQL's bin folder")
        let cluster = DrillPostgresCluster(bin: bin, folder: folder, port: try freePort())
        try FileManager.default.createDirectory(atPath: cluster.archive, withIntermediateDirectories: true)
        try cluster.ownFolder()
        try cluster.tool("initdb", ["-D", cluster.data, "-U", "ordersafe", "--auth=trust", "--no-sync", "-E", "UTF8"])
        let settings = """
            port = \(cluster.port)
            listen_addresses = '127.0.0.1'
            unix_socket_directories = '\(folder)'
            fsync = off
            max_connections = 100
            wal_level = replica
            archive_mode = on
            archive_command = 'test ! -f \(cluster.archive)/%f && cp %p \(cluster.archive)/%f'
            archive_timeout = 1
            restore_command = 'cp \(cluster.archive)/%f %p'

            """
        let conf = cluster.data + "/postgresql.conf"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: conf))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(settings.utf8))
        try handle.close()
        try cluster.startServer()
        return cluster
    }

    /// `pg_basebackup` into ``base``, the log streamed in, checked by `pg_verifybackup` (what scripts/ops/pg-backup
    /// does).
    func baseBackup() throws {
        try tool(
            "pg_basebackup",
            ["--dbname=\(url)", "--pgdata=\(base)", "--format=plain", "--wal-method=stream", "--checkpoint=fast"])
        try tool("pg_verifybackup", [base])
    }

    /// Waits until the archive holds the log of every write acknowledged so far: forces the segment switch
    /// `archive_timeout` would make (`pg_switch_wal`; PostgreSQL skips a timed switch when only its own background
    /// records were written since, which left the drill waiting on a segment that never closed) and waits for the
    /// archiver to pass it.
    func awaitArchived() async throws {
        let closed = try query("SELECT pg_walfile_name(pg_switch_wal())")
        for _ in 0..<600 {
            let archived = try query("SELECT coalesce(last_archived_wal, '') FROM pg_stat_archiver")
            if archived >= closed { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw DrillError("the archiver never reached \(closed)")
    }

    /// The disk dies: the server is killed and its data folder is gone.
    func lose() throws {
        try tool("pg_ctl", ["-D", data, "-m", "immediate", "stop"])
        try FileManager.default.removeItem(atPath: data)
    }

    /// Starts the cluster again from a copy of the base backup; `replayingArchive`: with `recovery.signal`, the
    /// archived log replayed to its end (point-in-time recovery to the moment of the loss).
    /// `pg_ctl start -w` returns once the server takes connections, which a server replaying the archive does
    /// read-only (`hot_standby`) before it is promoted: the ledger is handed over only once it is.
    func restore(replayingArchive: Bool) async throws {
        try runAsOwner("/bin/cp", ["-a", base, data])
        if replayingArchive { try runAsOwner("/usr/bin/touch", [data + "/recovery.signal"]) }
        try startServer()
        for _ in 0..<600 {
            if try query("SELECT pg_is_in_recovery()") == "f" { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw DrillError("the restored cluster never left recovery")
    }

    /// Stops the cluster and removes its folder.
    func remove() {
        _ = try? tool("pg_ctl", ["-D", data, "-m", "immediate", "stop"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func startServer() throws {
        try tool("pg_ctl", ["-D", data, "-l", folder + "/server.log", "-w", "-t", "60", "start"])
    }

    private func query(_ sql: String) throws -> String {
        try tool("psql", [url, "-XAtq", "-c", sql]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @discardableResult
    private func tool(_ name: String, _ arguments: [String]) throws -> String {
        try runAsOwner(bin + "/" + name, arguments)
    }

    private var asRoot: Bool { getuid() == 0 }

    private func ownFolder() throws {
        guard asRoot else { return }
        try Self.run("/bin/chown", ["-R", "postgres", folder])
    }

    @discardableResult
    private func runAsOwner(_ executable: String, _ arguments: [String]) throws -> String {
        asRoot
            ? try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments)
            : try Self.run(executable, arguments)
    }

    /// Runs a tool to its end (`posix_spawn` and `waitpid`: Foundation's `Process` never saw `pg_ctl start` end, its
    /// server keeping the session), its output in a file.
    @discardableResult
    private static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("drill-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o666)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw DrillError("\(executable) could not start: error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw DrillError(
                "\((executable as NSString).lastPathComponent) \(arguments.joined(separator: " ")): \(text)")
        }
        return text
    }

    private static func freePort() throws -> Int {
        let probe = try run(
            "/usr/bin/python3",
            ["-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
        return try #require(Int(probe.trimmingCharacters(in: .whitespacesAndNewlines)))
    }
}

/// A step of the drill's cluster that failed, with the tool's output.
struct DrillError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
