import Logging

/// Tests log warnings and errors only, so a failure's output is not buried.
public enum TestLog {
    public static let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        return logger
    }()
}
