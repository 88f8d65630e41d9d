import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import OrderSafeServer

/// The idle timeout on an embedded event loop, whose clock moves only when a test moves it.
@Suite("Idle connections: closed once idle for the timeout since opening or their last response, never while busy")
struct ConnectionStateHandlerTests {
    /// An open connection through the handler, with a 30-second timeout.
    struct Connection {
        let loop = EmbeddedEventLoop()
        let channel: EmbeddedChannel

        init() throws {
            channel = EmbeddedChannel(loop: loop)
            try channel.pipeline.syncOperations.addHandler(
                ConnectionStateHandler(timeout: .seconds(30), limiter: ConnectionLimiter(perAddress: 0, total: 10)))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        }

        func advance(_ seconds: Int64) { loop.advanceTime(by: .seconds(seconds)) }

        func requestArrives() throws {
            try channel.writeInbound(
                HTTPRequestPart.head(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/healthz")))
            try channel.writeInbound(HTTPRequestPart.end(nil))
        }

        func responseEnds() throws {
            try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
            try channel.writeOutbound(HTTPResponsePart.end(nil))
        }

        var isOpen: Bool { channel.isActive }

        /// Open a second before the timeout runs out from now; closed when it does.
        func expectClosedAfterTheTimeout(sourceLocation: SourceLocation = #_sourceLocation) {
            advance(29)
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
}
