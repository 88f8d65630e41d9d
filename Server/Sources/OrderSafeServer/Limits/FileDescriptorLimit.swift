#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open files, which bounds its connections: each takes one.
enum FileDescriptorLimit {
    /// Descriptors kept for what is not a client connection: database connections, the SQLite files and journal,
    /// logs, outgoing provider calls.
    static let reserved = 128

    /// Raises the soft limit to the hard one (as Go's runtime does at start since Go 1.19: the soft default of 1,024
    /// is a relic of `select`, which a server on epoll does not use) and answers the soft limit now.
    static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }

    /// The connections a server may hold: `configured`, or (0) what the descriptors allow after ``reserved``, at
    /// most 65,536; never more than the descriptors allow.
    static func connections(configured: Int) -> Int {
        let available = max(raise() - reserved, 16)
        return configured > 0 ? min(configured, available) : min(available, 65_536)
    }
}
