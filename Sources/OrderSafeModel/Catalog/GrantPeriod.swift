import Foundation

/// A calendar period such as one month, written as an ISO 8601 duration (`P7D`, `P2W`, `P1M`, `P1Y`).
public struct GrantPeriod: Codable, Hashable, Sendable, CustomStringConvertible {
    public enum Unit: String, Sendable, Hashable, CaseIterable {
        case day = "D"
        case week = "W"
        case month = "M"
        case year = "Y"
    }

    public let count: Int
    public let unit: Unit

    public init(count: Int, unit: Unit) {
        self.count = count
        self.unit = unit
    }

    /// Parses `P<n><D|W|M|Y>` with 1 ≤ n ≤ 1000; nil for anything else.
    public init?(iso8601 text: String) {
        guard text.count >= 3, text.hasPrefix("P"), let unit = text.last.flatMap({ Unit(rawValue: String($0)) }) else {
            return nil
        }
        let digits = text.dropFirst().dropLast()
        guard digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), !digits.hasPrefix("0"),
            let count = Int(digits), (1...1000).contains(count)
        else { return nil }
        self.init(count: count, unit: unit)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let value = GrantPeriod(iso8601: raw) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(raw)' is not a period like P7D, P2W, P1M or P1Y")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    public var description: String { "P\(count)\(unit.rawValue)" }

    /// `date` moved forward by `times` of this period on the Gregorian calendar in UTC (1 Jan 31 + P1M = 28/29 Feb).
    public func adding(to date: Date, times: Int = 1) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let component: Calendar.Component =
            switch unit {
            case .day: .day
            case .week: .weekOfYear
            case .month: .month
            case .year: .year
            }
        return calendar.date(byAdding: component, value: count * times, to: date) ?? date
    }
}
