import Foundation

/// A calendar day as a provider's statement names it (`yyyy-MM-dd`), in the provider's own zone: Alipay's and
/// WeChat Pay's days are Beijing's (UTC+8, no daylight saving).
public struct StatementDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Parses `yyyy-MM-dd` strictly: ten characters, a real Gregorian date from 2000 to 9999.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), year >= 2000,
            (1...12).contains(month), (1...Self.days(inMonth: month, of: year)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The day `date` falls on in a zone `utcOffset` seconds east of UTC.
    public init(containing date: Date, utcOffset: Int) {
        let parts = Self.calendar(utcOffset).dateComponents([.year, .month, .day], from: date)
        year = parts.year ?? 2000
        month = parts.month ?? 1
        day = parts.day ?? 1
    }

    public var description: String {
        String(format: "%04d-%02d-%02d", year, month, day)
    }

    /// The day's first instant in a zone `utcOffset` seconds east of UTC.
    public func start(utcOffset: Int) -> Date {
        let parts = DateComponents(year: year, month: month, day: day)
        return Self.calendar(utcOffset).date(from: parts) ?? .distantPast
    }

    /// The day after.
    public var next: StatementDay {
        var next = self
        if day < Self.days(inMonth: month, of: year) {
            next = StatementDay(year: year, month: month, day: day + 1)
        } else if month < 12 {
            next = StatementDay(year: year, month: month + 1, day: 1)
        } else {
            next = StatementDay(year: year + 1, month: 1, day: 1)
        }
        return next
    }

    public static func < (lhs: StatementDay, rhs: StatementDay) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    private init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    private static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func calendar(_ utcOffset: Int) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: utcOffset) ?? .gmt
        return calendar
    }
}
