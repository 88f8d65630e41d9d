import Foundation
import Logging

/// Writes one JSON object per log line to standard error: `{"ts","level","label","msg",…metadata}`.
public struct JSONLogHandler: LogHandler {
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
        var object: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = value.description
        }
        object["ts"] = Date().ISO8601Format(.iso8601.time(includingFractionalSeconds: true).year().month().day())
        object["level"] = event.level.rawValue
        object["label"] = label
        object["msg"] = event.message.description
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(object) else { return }
        line.append(UInt8(ascii: "\n"))
        FileHandle.standardError.write(line)
    }
}

extension Settings.LogFormat {
    /// Installs the process-wide log handler for this format. Call once, at start.
    public func bootstrap(level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                switch self {
                case .text: TextLogHandler(label: label)
                case .json: JSONLogHandler(label: label)
                }
            handler.logLevel = level
            return handler
        }
    }
}
