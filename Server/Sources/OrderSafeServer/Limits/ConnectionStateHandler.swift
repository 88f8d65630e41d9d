import NIOCore
import NIOHTTPTypes

/// One connection's state, and what the server does with it. A connection is *idle* from its opening, and from the
/// end of each response, until the next request head has fully arrived; then it is *busy* until its response ends.
/// - An idle connection is closed once idle for `timeout`. Headers trickled a byte at a time (slowloris) keep
///   resetting NIO's idle timer; they do not reset this one.
/// - A request whose body has not fully arrived `bodyTimeout` after its head closes the connection: a body trickled
///   a byte at a time holds neither the connection nor a graceful shutdown, whether or not its route reads it.
/// - The ``ConnectionLimiter`` counts it against its address and the total, and may close it to make room while it
///   is idle (the longest idle first), never while it is busy; when no room can be made, it is closed on opening.
///
/// Both timeouts are kept by one pending look per connection, on its event loop. The body's was a task per request
/// that slept on the shared pool and was cancelled once the body came: a task created, two of its jobs run and a
/// timer left in libdispatch's heap for `server.request_timeout_seconds` at every submission.
final class ConnectionStateHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let timeout: TimeAmount
    let bodyTimeout: TimeAmount
    let limiter: ConnectionLimiter
    /// When the connection last became idle; nil while a request is in progress.
    private var idleSince: NIODeadline?
    /// When the head came of the request whose body is still arriving; nil when none is.
    private var bodySince: NIODeadline?
    /// The one pending look at how long the connection has been idle or its body has taken, and when it comes. A
    /// request's head and end and its response's end only record the time; the look, when it comes, closes the
    /// connection or comes again when a timeout would run out. It is moved earlier only for a timeout that runs out
    /// before it (with a body timeout shorter than the idle one: at every request). A timer cancelled and scheduled
    /// again at every request cost a fresh submission about 5,000 instructions (`scripts/bench/instructions 2 10`:
    /// the event loop's scheduled tasks, under the lock its hand-offs from other threads take).
    private var check: (scheduled: Scheduled<Void>, at: NIODeadline)?
    private var registered = false

    init(timeout: TimeAmount, bodyTimeout: TimeAmount, limiter: ConnectionLimiter) {
        self.timeout = timeout
        self.bodyTimeout = bodyTimeout
        self.limiter = limiter
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { opened(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        opened(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            let now = context.eventLoop.now
            idleSince = nil
            bodySince = now
            limiter.busy(context.channel)
            look(by: now + bodyTimeout, context)
        case .end:
            bodySince = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            limiter.idle(context.channel)
            becameIdle(context)
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.scheduled.cancel()
        check = nil
        if registered { limiter.closed(context.channel) }
        registered = false
        context.fireChannelInactive()
    }

    /// The connection is open: counted (or closed at once when there is no room), and idle.
    private func opened(_ context: ChannelHandlerContext) {
        guard !registered else { return }
        guard limiter.open(context.channel) else {
            context.close(promise: nil)
            return
        }
        registered = true
        becameIdle(context)
    }

    /// The connection waits for a request from now on.
    private func becameIdle(_ context: ChannelHandlerContext) {
        let now = context.eventLoop.now
        idleSince = now
        look(by: now + timeout, context)
    }

    /// Makes sure a look comes by `deadline`: schedules one there unless one comes by then already.
    private func look(by deadline: NIODeadline, _ context: ChannelHandlerContext) {
        if let check {
            guard deadline < check.at else { return }
            check.scheduled.cancel()
        }
        look(at: deadline, on: context.eventLoop, closing: context.channel)
    }

    /// At `deadline`: closes `channel` if it has been idle for `timeout`, or waited for a body for `bodyTimeout`,
    /// else looks again when either would run out; a busy connection whose body has come is left to its response's
    /// end, which schedules the next look.
    private func look(at deadline: NIODeadline, on loop: any EventLoop, closing channel: any Channel) {
        let scheduled = loop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            check = nil
            let dues = [idleSince.map { $0 + timeout }, bodySince.map { $0 + bodyTimeout }].compactMap { $0 }
            guard let due = dues.min() else { return }
            if loop.now >= due {
                channel.close(promise: nil)
            } else {
                look(at: due, on: loop, closing: channel)
            }
        }
        check = (scheduled, deadline)
    }
}
