import Foundation
import Logging
import Synchronization
import Testing

@testable import OrderSafeServer

@Suite("The text log: swift-log's StreamLogHandler's lines, the metadata formatted when a line is written")
struct TextLogHandlerTests {
    /// What a `StreamLogHandler` writes.
    final class Captured: TextOutputStream, Sendable {
        let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
    }

    @Test("the same line as StreamLogHandler for the same event and metadata, after its local time")
    func sameLines() {
        let captured = Captured()
        var stream = StreamLogHandler(label: "ordersafe.test", stream: captured, metadataProvider: nil)
        var text = TextLogHandler(label: "ordersafe.test")
        for (key, value) in [("user_id", "alice"), ("request_id", "r-1"), ("hb.request.id", "7")] {
            stream[metadataKey: key] = .string(value)
            text[metadataKey: key] = .string(value)
        }
        let events = [
            LogEvent(
                level: .error, message: "stored", metadata: ["order_no": "OS1", "user_id": "bob"], source: "Engine",
                file: #fileID, function: #function, line: #line),
            LogEvent(
                level: .info, message: "plain", metadata: nil, source: "Ledger", file: #fileID, function: #function,
                line: #line),
            LogEvent(
                level: .warning, message: "failed", error: CocoaError(.fileNoSuchFile), metadata: nil, source: "S",
                file: #fileID, function: #function, line: #line),
        ]
        var expected: [Substring] = []
        var written: [Substring] = []
        for event in events {
            stream.log(event: event)
            written.append(
                TextLogHandler.line(event, label: "ordersafe.test", metadata: text.metadata, at: time(nil))[...])
        }
        expected = captured.text.withLock { $0 }.split(separator: "\n", omittingEmptySubsequences: true)
        #expect(expected.count == events.count)
        for (ours, theirs) in zip(written, expected) {
            #expect(ours.drop { $0 != " " }.dropLast() == theirs.drop { $0 != " " }, "\(ours) against \(theirs)")
        }
        #expect(written[0].contains(" hb.request.id=7 order_no=OS1 request_id=r-1 user_id=bob [Engine] stored"))
    }

    @Test("the time is the machine's, to the second, with its offset")
    func localTime() {
        let event = LogEvent(
            level: .info, message: "m", metadata: nil, source: "S", file: #fileID, function: #function, line: #line)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssZ"
        let expected = formatter.string(from: Date(timeIntervalSince1970: 1_796_006_247))
        #expect(TextLogHandler.line(event, label: "", metadata: [:], at: 1_796_006_247) == "\(expected) info: [S] m\n")
    }
}
