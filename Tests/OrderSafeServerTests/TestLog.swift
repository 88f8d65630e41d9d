import Logging

/// Tests log warnings and errors only, so a failure's output is not buried.
enum TestLog {
    static let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        return logger
    }()
}
