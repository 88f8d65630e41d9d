import Foundation
import OrderSafeModel

/// The numbers behind a simulator's provider ids (Alipay's `trade_no`, WeChat Pay's `transaction_id` and refund ids),
/// never handed out twice on one data folder: real providers never reuse a transaction id, and a simulator that did
/// after a restart made the ledger meet one id on two orders.
///
/// Numbers start from the clock (whole seconds since 1970: a process started later starts higher) or after the last
/// block reserved in `file`, whichever is higher. A block of numbers is reserved in the file (written whole and
/// renamed into place) before the first of it is handed out, so a process killed at any moment restarts past every
/// number it may have used.
struct SandboxSerial {
    private let file: URL?
    private let block: Int64
    private var next: Int64
    private var reservedUpTo: Int64

    /// - Parameters:
    ///   - file: where the reservation is kept; nil keeps nothing (tests in one process).
    init(file: URL?, clock: any WallClock, block: Int64 = 1_000) throws {
        self.file = file
        self.block = block
        var start = Int64(clock.now().timeIntervalSince1970)
        if let file, let text = try? String(contentsOf: file, encoding: .utf8) {
            guard let reserved = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)), reserved >= 0 else {
                throw SandboxSerialError.unreadable(file.path)
            }
            start = max(start, reserved)
        }
        next = start
        reservedUpTo = start
    }

    /// The next number, reserving another block on disk first when the last one is used up.
    mutating func take() throws -> Int64 {
        if next >= reservedUpTo {
            let (upTo, overflow) = next.addingReportingOverflow(block)
            guard !overflow else { throw SandboxSerialError.exhausted }
            if let file {
                do {
                    try Data("\(upTo)\n".utf8).write(to: file, options: .atomic)
                } catch {
                    throw SandboxSerialError.unwritable(file.path, "\(error)")
                }
            }
            reservedUpTo = upTo
        }
        defer { next += 1 }
        return next
    }
}

/// Why a simulator could not number a new payment.
enum SandboxSerialError: Error, CustomStringConvertible {
    case unreadable(String)
    case unwritable(String, String)
    case exhausted

    var description: String {
        switch self {
        case .unreadable(let path):
            "the sandbox's id counter \(path) does not hold a number: remove it to start from the clock"
        case .unwritable(let path, let reason): "the sandbox's id counter \(path) cannot be written: \(reason)"
        case .exhausted: "the sandbox's id counter is exhausted"
        }
    }
}
