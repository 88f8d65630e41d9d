import NIOCore

/// Runs tasks on one NIO event loop: a PostgreSQL session's code runs on its connection's own loop, so a statement is
/// written, answered and resumed on one thread instead of waking another thread at each end of each round trip.
final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
