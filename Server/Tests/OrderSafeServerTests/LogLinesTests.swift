import Foundation
import Logging
import Synchronization
import Testing

@testable import OrderSafeServer

@Suite("Log lines: swift-log's StreamLogHandler's text, or JSON, the metadata formatted when a line is written")
struct LogLinesTests {
    /// What a `StreamLogHandler` writes.
    final class Captured: TextOutputStream, Sendable {
        let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
    }

    static let events = [
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

    @Test("text: the same line as StreamLogHandler for the same event and metadata, after its local time")
    func sameLines() throws {
        let captured = Captured()
        var stream = StreamLogHandler(label: "ordersafe.test", stream: captured, metadataProvider: nil)
        var text = LogLines<TextLogLine>(label: "ordersafe.test")
        for (key, value) in [("user_id", "alice"), ("request_id", "r-1"), ("hb.request.id", "7")] {
            stream[metadataKey: key] = .string(value)
            text[metadataKey: key] = .string(value)
        }
        var written: [String] = []
        for event in Self.events {
            stream.log(event: event)
            let line = try #require(
                LogLines<TextLogLine>.line(event, label: "ordersafe.test", metadata: text.metadata, at: Date()))
            written.append(String(decoding: line, as: UTF8.self))
        }
        let expected = captured.text.withLock { $0 }.split(separator: "\n", omittingEmptySubsequences: true)
        #expect(expected.count == Self.events.count)
        for (ours, theirs) in zip(written, expected) {
            #expect(ours.drop { $0 != " " }.dropLast() == theirs.drop { $0 != " " }, "\(ours) against \(theirs)")
        }
        #expect(written[0].contains(" hb.request.id=7 order_no=OS1 request_id=r-1 user_id=bob [Engine] stored"))
    }

    @Test("text: the time is the machine's, to the second, with its offset")
    func localTime() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssZ"
        let date = Date(timeIntervalSince1970: 1_796_006_247.9)
        let line = try #require(TextLogLine.line(Self.events[1], label: "", metadata: [:], at: date))
        #expect(String(decoding: line, as: UTF8.self) == "\(formatter.string(from: date)) info: [Ledger] plain\n")
    }

    @Test("JSON: one object a line, keys sorted, the event's metadata over the handler's, an error's kept")
    func json() throws {
        let date = Date(timeIntervalSince1970: 1_796_006_247.25)
        let line = try #require(
            LogLines<JSONLogLine>.line(Self.events[2], label: "ordersafe", metadata: ["user_id": "alice"], at: date))
        #expect(line.last == UInt8(ascii: "\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: line) as? [String: String])
        #expect(object["ts"] == "2026-11-30T02:37:27.250Z" && object["level"] == "warning" && object["msg"] == "failed")
        #expect(object["label"] == "ordersafe" && object["user_id"] == "alice")
        #expect(object["error.type"]?.hasSuffix("CocoaError") == true && object["error.message"] != nil)
        let first = try #require(
            LogLines<JSONLogLine>.line(Self.events[0], label: "l", metadata: ["user_id": "a"], at: date))
        #expect(
            String(decoding: first, as: UTF8.self).hasPrefix(
                #"{"label":"l","level":"error","msg":"stored","order_no":"OS1","#))
        #expect(String(decoding: first, as: UTF8.self).contains(#""user_id":"bob"}"#))
    }
}
