import Foundation
import OrderSafeModel

/// How the console writes money and times: amounts from minor units with the currency's own digits (integers
/// only), times in the operator's zone.
struct ConsoleFormat: Sendable {
    let zone: TimeZone

    /// `CNY 1,234.56`, `JPY 1,200`, `KWD 0.125`; a minus sign before the code when negative.
    static func money(_ money: Money) -> String {
        money.currency.code + " " + amount(money.amountMinor, digits: money.currency.minorUnitDigits)
    }

    /// Minor units as a decimal with `digits` places and thousands separators.
    static func amount(_ minor: Int64, digits: Int) -> String {
        let negative = minor < 0
        let magnitude = minor.magnitude
        var divisor: UInt64 = 1
        for _ in 0..<digits { divisor *= 10 }
        let whole = String(magnitude / divisor)
        var grouped = ""
        for (index, character) in whole.enumerated() {
            if index > 0, (whole.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(character)
        }
        var text = (negative ? "-" : "") + grouped
        if digits > 0 {
            let fraction = String(magnitude % divisor)
            text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
        }
        return text
    }

    /// `2026-11-23 19:51:50` in the zone.
    func time(_ date: Date) -> String {
        let calendar = Calendar.gregorian(in: zone)
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0, parts.hour ?? 0,
            parts.minute ?? 0,
            parts.second ?? 0)
    }

    func time(_ date: Date?) -> String? { date.map { time($0) } }

    /// The zone from the `tz` cookie the console's script sets from the browser, if it names a real zone.
    static let zoneCookieName = "ordersafe_tz"

    static func zone(cookie: String?, fallback: String) -> TimeZone {
        if let name = cookie?.removingPercentEncoding, let zone = zone(named: name) { return zone }
        return TimeZone(identifier: fallback) ?? .gmt
    }

    /// The IANA zone of that name, if it is one: letters, digits, `/`, `_`, `+`, `-`, at most 64 (no path tricks).
    static func zone(named name: String) -> TimeZone? {
        guard (1...64).contains(name.utf8.count), !name.hasPrefix("/"), !name.contains(".."),
            name.utf8.allSatisfy({
                $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "+")
                    || $0 == UInt8(ascii: "-")
            })
        else { return nil }
        return TimeZone(identifier: name)
    }
}

extension UInt8 {
    var isASCIILetterOrDigit: Bool { (48...57).contains(self) || (65...90).contains(self) || (97...122).contains(self) }
}
