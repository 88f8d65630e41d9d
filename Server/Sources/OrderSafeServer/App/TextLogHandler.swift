import Foundation
import Logging

/// Writes one line per event to standard error, as swift-log's `StreamLogHandler` writes them
/// (`<local time> <level> <label>: <key=value …> [<source>] <message>`, the metadata sorted by key), but formats the
/// metadata only when it writes a line: `StreamLogHandler` formats it again at every change, and each request's logger
/// gets two or three (its request id, its user) whether or not anything is logged — 1.5% of a submission's CPU in the
/// load profile.
public struct TextLogHandler: LogHandler {
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
        FileHandle.standardError.write(Data(Self.line(event, label: label, metadata: metadata, at: time(nil)).utf8))
    }

    /// The line `event` is written as, at `seconds` since 1970 (in the machine's time zone).
    static func line(_ event: LogEvent, label: String, metadata: Logger.Metadata, at seconds: time_t) -> String {
        var all = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        if let error = event.error {
            all["error.message"] = "\(error)"
            all["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        let pretty = all.sorted { $0.key < $1.key }.map { " \($0)=\($1)" }.joined()
        return "\(timestamp(seconds)) \(event.level)\(label.isEmpty ? "" : " ")\(label):\(pretty) [\(event.source)] "
            + "\(event.message)\n"
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
