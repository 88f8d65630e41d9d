import Foundation
import Logging

/// Writes one line per event to standard error, in `Format`, the metadata formatted only when a line is written
/// (swift-log's `StreamLogHandler` formats it again at every change, and each request's logger gets two or three — its
/// request id, its user — whether or not anything is logged: 1.5% of a submission's CPU in the load profile).
public struct LogLines<Format: LogLineFormat>: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        guard let line = Self.line(event, label: label, metadata: metadata, at: Date()) else { return }
        FileHandle.standardError.write(line)
    }

    /// The line `event` is written as: the handler's metadata, the event's over it, and its error's as
    /// `StreamLogHandler` adds them.
    static func line(_ event: LogEvent, label: String, metadata: Logger.Metadata, at date: Date) -> Data? {
        var all = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        if let error = event.error {
            all["error.message"] = "\(error)"
            all["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        return Format.line(event, label: label, metadata: all, at: date)
    }
}

/// How a log line is written: its bytes with the final newline, or nil when it cannot be.
public protocol LogLineFormat {
    static func line(_ event: LogEvent, label: String, metadata: Logger.Metadata, at date: Date) -> Data?
}

/// `StreamLogHandler`'s lines: `<local time> <level> <label>: <key=value …> [<source>] <message>`, keys sorted.
public enum TextLogLine: LogLineFormat {
    public static func line(_ event: LogEvent, label: String, metadata: Logger.Metadata, at date: Date) -> Data? {
        let pretty = metadata.sorted { $0.key < $1.key }.map { " \($0)=\($1)" }.joined()
        let text =
            "\(timestamp(time_t(date.timeIntervalSince1970.rounded(.down)))) \(event.level)"
            + "\(label.isEmpty ? "" : " ")\(label):\(pretty) [\(event.source)] \(event.message)\n"
        return Data(text.utf8)
    }

    private static func timestamp(_ seconds: time_t) -> String {
        var seconds = seconds
        var local = tm()
        guard localtime_r(&seconds, &local) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// One JSON object per line: `{"ts","level","label","msg",…metadata}`, keys sorted; `ts` in UTC to the millisecond.
public enum JSONLogLine: LogLineFormat {
    public static func line(_ event: LogEvent, label: String, metadata: Logger.Metadata, at date: Date) -> Data? {
        var object: [String: String] = [:]
        for (key, value) in metadata {
            object[key] = value.description
        }
        // UTC, marked so (`Z`): the lines before this said UTC without saying it.
        object["ts"] = date.ISO8601Format(
            .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
        object["level"] = event.level.rawValue
        object["label"] = label
        object["msg"] = event.message.description
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(object) else { return nil }
        line.append(UInt8(ascii: "\n"))
        return line
    }
}

extension Settings.LogFormat {
    /// Installs the process-wide log handler for this format. Call once, at start.
    public func bootstrap(level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                switch self {
                case .text: LogLines<TextLogLine>(label: label)
                case .json: LogLines<JSONLogLine>(label: label)
                }
            handler.logLevel = level
            return handler
        }
    }
}
