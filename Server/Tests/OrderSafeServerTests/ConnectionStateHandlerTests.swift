import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import OrderSafeServer

/// The idle and body timeouts on an embedded event loop, whose clock moves only when a test moves it.
@Suite(
    "Connection timeouts: closed once idle for the timeout since opening or the last response, or when a body has not come the body timeout after its head; never while a request with its body is served"
)
struct ConnectionStateHandlerTests {
    /// An open connection through the handler, with a 30-second idle timeout and a body timeout of `body` seconds.
    struct Connection {
        let loop = EmbeddedEventLoop()
        let channel: EmbeddedChannel

        init(body: Int64 = 30) throws {
            channel = EmbeddedChannel(loop: loop)
            try channel.pipeline.syncOperations.addHandler(
                ConnectionStateHandler(
                    timeout: .seconds(30), bodyTimeout: .seconds(body),
                    limiter: ConnectionLimiter(perAddress: 0, total: 10)))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        }

        func advance(_ seconds: Int64) { loop.advanceTime(by: .seconds(seconds)) }

        func requestArrives() throws {
            try headArrives()
            try bodyEnds()
        }

        func headArrives() throws {
            try channel.writeInbound(
                HTTPRequestPart.head(HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/v1/orders")))
        }

        func bodyEnds() throws {
            try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "{}")))
            try channel.writeInbound(HTTPRequestPart.end(nil))
        }

        func responseEnds() throws {
            try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
            try channel.writeOutbound(HTTPResponsePart.end(nil))
        }

        var isOpen: Bool { channel.isActive }

        /// Open a second before `seconds` (the idle timeout unless told) run out from now; closed when they do.
        func expectClosedAfterTheTimeout(_ seconds: Int64 = 30, sourceLocation: SourceLocation = #_sourceLocation) {
            advance(seconds - 1)
            #expect(isOpen, sourceLocation: sourceLocation)
            advance(1)
            #expect(!isOpen, sourceLocation: sourceLocation)
        }
    }

    @Test("a connection that sends nothing is closed the timeout after its opening, not before")
    func neverUsed() throws {
        let connection = try Connection()
        connection.expectClosedAfterTheTimeout()
    }

    @Test("each response starts the idle time again: a connection used every 20 s stays open; idle for 30 s it closes")
    func usedWithinTheTimeout() throws {
        let connection = try Connection()
        for _ in 1...5 {
            connection.advance(20)
            try connection.requestArrives()
            try connection.responseEnds()
            #expect(connection.isOpen)
        }
        connection.expectClosedAfterTheTimeout()
    }

    @Test("a request in progress is never cut off; the timeout runs from its response's end")
    func busyAcrossTheTimeout() throws {
        let connection = try Connection()
        connection.advance(10)
        try connection.requestArrives()
        connection.advance(100)
        #expect(connection.isOpen)
        try connection.responseEnds()
        connection.expectClosedAfterTheTimeout()
    }

    @Test("a request that arrives as the timeout falls, and ends after it, keeps the connection open")
    func busyWhenTheLookComes() throws {
        let connection = try Connection()
        connection.advance(29)
        try connection.requestArrives()
        connection.advance(2)
        #expect(connection.isOpen)
        try connection.responseEnds()
        connection.expectClosedAfterTheTimeout()
    }

    @Test("a body that has not come the body timeout after its head closes the connection, though never idle")
    func bodyTrickled() throws {
        let connection = try Connection()
        connection.advance(5)
        try connection.headArrives()
        try connection.channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "{")))
        connection.expectClosedAfterTheTimeout()
    }

    @Test("a body shorter in time than the idle timeout is cut off at its own: the pending look is brought forward")
    func bodyTimeoutBeforeTheIdleLook() throws {
        let connection = try Connection(body: 10)
        connection.advance(5)
        try connection.headArrives()
        connection.expectClosedAfterTheTimeout(10)
    }

    @Test("a body timeout longer than the idle one: the idle look finds the body awaited and looks again at its end")
    func bodyTimeoutAfterTheIdleLook() throws {
        let connection = try Connection(body: 60)
        connection.advance(5)
        try connection.headArrives()
        connection.advance(30)
        #expect(connection.isOpen)
        connection.expectClosedAfterTheTimeout(30)
    }

    @Test("a body that comes in time is served however long its response takes, then the idle timeout runs")
    func bodyInTime() throws {
        let connection = try Connection(body: 10)
        try connection.headArrives()
        connection.advance(9)
        try connection.bodyEnds()
        connection.advance(100)
        #expect(connection.isOpen)
        try connection.responseEnds()
        connection.expectClosedAfterTheTimeout()
    }
}
