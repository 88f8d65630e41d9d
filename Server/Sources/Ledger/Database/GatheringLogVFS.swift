import Foundation
import VaporCSQLite

/// An SQLite VFS: the system's (`unix`) with the write-ahead log's writes gathered (``GatheredLogWrites``) until
/// SQLite syncs, reads, sizes, truncates or closes the log. Every other file is the system VFS's own, untouched.
///
/// The ledger's writer opens its connection with it. Its commits sync the log (`synchronous=FULL`), and SQLite
/// syncs the log before it publishes a commit's frames in the shared index that readers and checkpoints read the log
/// by (`sqlite3WalFrames`: the frames, then the sync, then `walIndexAppend`), so no other connection reads a frame
/// still in memory; a process killed before that sync loses frames no commit owned (`scripts/checks/kill-check`).
/// Not for a connection with `synchronous=NORMAL` or `OFF`: its commits publish frames without a sync.
enum GatheringLogVFS {
    /// The name connections open the ledger with; registered at first use.
    static var name: String {
        _ = registered
        return vfsName
    }

    private static let vfsName = "ordersafe-gathered-log"

    /// The system VFS every call goes on to.
    nonisolated(unsafe) private static let system: UnsafeMutablePointer<sqlite3_vfs> = {
        sqlite_nio_sqlite3_initialize()
        guard let unix = sqlite_nio_sqlite3_vfs_find("unix") else { fatalError("SQLite has no unix VFS") }
        return unix
    }()

    /// Bytes in front of the system's file in each of this VFS's: the log file's methods (``methods``) and its
    /// gathered writes.
    private static let header = MemoryLayout<sqlite3_file>.stride + MemoryLayout<UnsafeMutableRawPointer>.stride

    /// The log file's methods: each hands what it gathered on first where the system's file must hold it.
    nonisolated(unsafe) private static let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)

    private static let logMethods = sqlite3_io_methods(
        iVersion: 3,
        xClose: { file in
            let status = GatheringLogVFS.handOn(file!)
            let closed = GatheringLogVFS.system(file!) { $0.pointee.pMethods.pointee.xClose!($0) }
            GatheringLogVFS.writes(file!).deinitialize(count: 1).deallocate()
            return status != SQLITE_OK ? status : closed
        },
        xRead: { file, buffer, amount, offset in
            GatheringLogVFS.afterHandingOn(file!) { $0.pointee.pMethods.pointee.xRead!($0, buffer, amount, offset) }
        },
        xWrite: { file, source, amount, offset in
            GatheringLogVFS.system(file!) { real in
                GatheringLogVFS.writes(file!).pointee.write(source!, amount: Int(amount), at: offset) {
                    real.pointee.pMethods.pointee.xWrite!(real, $0, Int32($1), $2)
                }
            }
        },
        xTruncate: { file, size in
            GatheringLogVFS.afterHandingOn(file!) { $0.pointee.pMethods.pointee.xTruncate!($0, size) }
        },
        xSync: { file, flags in
            GatheringLogVFS.afterHandingOn(file!) { $0.pointee.pMethods.pointee.xSync!($0, flags) }
        },
        xFileSize: { file, size in
            GatheringLogVFS.afterHandingOn(file!) { $0.pointee.pMethods.pointee.xFileSize!($0, size) }
        },
        xLock: { file, lock in GatheringLogVFS.system(file!) { $0.pointee.pMethods.pointee.xLock!($0, lock) } },
        xUnlock: { file, lock in GatheringLogVFS.system(file!) { $0.pointee.pMethods.pointee.xUnlock!($0, lock) } },
        xCheckReservedLock: { file, result in
            GatheringLogVFS.system(file!) { $0.pointee.pMethods.pointee.xCheckReservedLock!($0, result) }
        },
        xFileControl: { file, operation, argument in
            GatheringLogVFS.afterHandingOn(file!) { $0.pointee.pMethods.pointee.xFileControl!($0, operation, argument) }
        },
        xSectorSize: { file in GatheringLogVFS.system(file!) { $0.pointee.pMethods.pointee.xSectorSize!($0) } },
        xDeviceCharacteristics: { file in
            GatheringLogVFS.system(file!) { $0.pointee.pMethods.pointee.xDeviceCharacteristics!($0) }
        },
        xShmMap: { file, page, size, extend, memory in
            GatheringLogVFS.system(file!) { $0.pointee.pMethods.pointee.xShmMap!($0, page, size, extend, memory) }
        },
        xShmLock: { file, offset, count, flags in
            GatheringLogVFS.system(file!) { $0.pointee.pMethods.pointee.xShmLock!($0, offset, count, flags) }
        },
        xShmBarrier: { file in GatheringLogVFS.system(file!) { $0.pointee.pMethods.pointee.xShmBarrier!($0) } },
        xShmUnmap: { file, delete in
            GatheringLogVFS.system(file!) { $0.pointee.pMethods.pointee.xShmUnmap!($0, delete) }
        },
        xFetch: { file, offset, amount, pointer in
            GatheringLogVFS.afterHandingOn(file!) { $0.pointee.pMethods.pointee.xFetch!($0, offset, amount, pointer) }
        },
        xUnfetch: { file, offset, pointer in
            GatheringLogVFS.system(file!) { $0.pointee.pMethods.pointee.xUnfetch!($0, offset, pointer) }
        })

    private static func makeVFS() -> sqlite3_vfs {
        var vfs = system.pointee
        vfs.szOsFile = Int32(header) + system.pointee.szOsFile
        vfs.pNext = nil
        vfs.zName = UnsafePointer(strdup(vfsName))
        vfs.xOpen = { _, path, file, flags, outFlags in
            let system = GatheringLogVFS.system
            guard flags & SQLITE_OPEN_WAL != 0 else {
                // Any other file is the system VFS's, in place: SQLite calls its methods with no step between.
                return system.pointee.xOpen!(system, path, file, flags, outFlags)
            }
            let real = GatheringLogVFS.realFile(file!)
            let status = system.pointee.xOpen!(system, path, real, flags, outFlags)
            guard status == SQLITE_OK, real.pointee.pMethods != nil else {
                file!.pointee.pMethods = nil
                return status
            }
            let writes = UnsafeMutablePointer<GatheredLogWrites>.allocate(capacity: 1)
            writes.initialize(to: GatheredLogWrites())
            (UnsafeMutableRawPointer(file!) + MemoryLayout<sqlite3_file>.stride)
                .storeBytes(of: UnsafeMutableRawPointer(writes), as: UnsafeMutableRawPointer.self)
            file!.pointee.pMethods = UnsafePointer(GatheringLogVFS.methods)
            return SQLITE_OK
        }
        return vfs
    }

    /// SQLite keeps the pointer it is given for the life of the process.
    private static let registered: Void = {
        methods.initialize(to: logMethods)
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: makeVFS())
        let status = sqlite_nio_sqlite3_vfs_register(vfs, 0)
        guard status == SQLITE_OK else { fatalError("SQLite refused the \(vfsName) VFS: \(status)") }
    }()

    private static func realFile(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<sqlite3_file> {
        (UnsafeMutableRawPointer(file) + header).assumingMemoryBound(to: sqlite3_file.self)
    }

    private static func writes(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<GatheredLogWrites> {
        (UnsafeMutableRawPointer(file) + MemoryLayout<sqlite3_file>.stride)
            .load(as: UnsafeMutableRawPointer.self).assumingMemoryBound(to: GatheredLogWrites.self)
    }

    /// `body` on the system's file inside `file`.
    private static func system<R>(
        _ file: UnsafeMutablePointer<sqlite3_file>, _ body: (UnsafeMutablePointer<sqlite3_file>) -> R
    ) -> R {
        body(realFile(file))
    }

    /// Writes what `file` has gathered; SQLite's error code, or `SQLITE_OK`.
    private static func handOn(_ file: UnsafeMutablePointer<sqlite3_file>) -> Int32 {
        let real = realFile(file)
        return writes(file).pointee.handOn { real.pointee.pMethods.pointee.xWrite!(real, $0, Int32($1), $2) }
    }

    /// `body` on the system's file once what `file` gathered is written; the write's error instead, if it failed.
    private static func afterHandingOn(
        _ file: UnsafeMutablePointer<sqlite3_file>, _ body: (UnsafeMutablePointer<sqlite3_file>) -> Int32
    ) -> Int32 {
        let status = handOn(file)
        return status == SQLITE_OK ? body(realFile(file)) : status
    }
}
