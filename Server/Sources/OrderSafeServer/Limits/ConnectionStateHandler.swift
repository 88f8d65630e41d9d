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
    private var deadline: Scheduled<Void>?
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
            deadline?.cancel()
            deadline = nil
            limiter.busy(context.channel)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            limiter.idle(context.channel)
            arm(context)
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
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
        arm(context)
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }
}
