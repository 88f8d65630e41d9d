import NIOPosix

/// Runs tasks on a one-thread `NIOThreadPool`: the SQLite writer's lane runs here, on the thread its connection's
/// statements run on, so a write's code and its statements take turns on one thread instead of waking another
/// thread twice per statement (the profile before this: a third of the server's time in switching threads).
final class ThreadPoolTaskExecutor: TaskExecutor {
    private let pool: NIOThreadPool

    init(_ pool: NIOThreadPool) {
        self.pool = pool
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pool.submit { [self] _ in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
