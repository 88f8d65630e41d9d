import NIOPosix

/// Runs tasks on a `NIOThreadPool`: the SQLite writer's lane runs on the writer's one thread, where its statements
/// run too, and a read on the readers' threads, so a write's or a read's code and its statements take turns on one
/// thread instead of waking another thread twice per statement (the profile before this: a third of the server's
/// time in switching threads).
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
