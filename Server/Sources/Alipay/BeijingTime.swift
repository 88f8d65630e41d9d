import Foundation

/// Alipay's timestamps: `yyyy-MM-dd HH:mm:ss` in Beijing time (UTC+8), whatever the host's time zone.
public enum BeijingTime {
    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 8 * 3600)!
        return calendar
    }()

    public static func string(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0,
            c.second ?? 0)
    }

    public static func date(_ text: String) -> Date? {
        let parts = text.split { $0 == "-" || $0 == " " || $0 == ":" }.compactMap { Int($0) }
        guard parts.count == 6, text.count == 19 else { return nil }
        let components = DateComponents(
            year: parts[0], month: parts[1], day: parts[2], hour: parts[3], minute: parts[4], second: parts[5])
        return calendar.date(from: components)
    }
}
