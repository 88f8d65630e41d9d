import NIOCore
import NIOHTTPTypes

/// One connection's state, and what the server does with it. A connection is *idle* from its opening, and from the
/// end of each response, until the next request head has fully arrived; then it is *busy* until its response ends.
/// - An idle connection is closed once idle for `timeout`. Headers trickled a byte at a time (slowloris) keep
///   resetting NIO's idle timer; they do not reset this one.
/// - The ``ConnectionLimiter`` counts it against its address and the total, and may close it to make room while it
///   is idle (the longest idle first), never while it is busy; when no room can be made, it is closed on opening.
final class ConnectionStateHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let timeout: TimeAmount
    let limiter: ConnectionLimiter
    /// When the connection last became idle; nil while a request is in progress.
    private var idleSince: NIODeadline?
    /// The one pending look at how long the connection has been idle. A request's end only records the time
    /// (`idleSince`); the look, when it comes, closes the connection or comes again when its idle time would run out.
    /// A timer cancelled and scheduled again at every request cost a fresh submission about 5,000 instructions
    /// (`scripts/bench/instructions 2 10`: the event loop's scheduled tasks, under the lock its hand-offs from other
    /// threads take).
    private var check: Scheduled<Void>?
    private var registered = false

    init(timeout: TimeAmount, limiter: ConnectionLimiter) {
        self.timeout = timeout
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
        if case .head = unwrapInboundIn(data) {
            idleSince = nil
            limiter.busy(context.channel)
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
        check?.cancel()
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

    /// The connection waits for a request from now on: a look at its idle time is scheduled unless one is.
    private func becameIdle(_ context: ChannelHandlerContext) {
        let now = context.eventLoop.now
        idleSince = now
        if check == nil { look(at: now + timeout, on: context.eventLoop, closing: context.channel) }
    }

    /// At `deadline`: closes `channel` if it has been idle for `timeout` since, else looks again when it would
    /// have been; a busy connection is left to its request's end, which schedules the next look.
    private func look(at deadline: NIODeadline, on loop: any EventLoop, closing channel: any Channel) {
        check = loop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            check = nil
            guard let idleSince else { return }
            let due = idleSince + timeout
            if loop.now >= due {
                channel.close(promise: nil)
            } else {
                look(at: due, on: loop, closing: channel)
            }
        }
    }
}
