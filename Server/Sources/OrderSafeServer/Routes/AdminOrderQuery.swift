import Foundation
import Hummingbird
import HummingbirdCore
import Ledger
import OrderSafeModel

/// The orders list's filters as query parameters, shared by `GET /v1/admin/orders` and the console's orders page:
/// `q` (an order number or UUID, transaction id or original transaction id, else a user id), `user`, `status`, `channel`,
/// `product`, `from` and `to` (days, `YYYY-MM-DD`, both included, in the caller's time zone), `cursor`, `limit`.
/// Parsed strictly: an unknown parameter, a repeated one, or a value out of shape is refused with its name.
struct AdminOrderQuery: Sendable {
    var query: OrderQuery
    /// The parameters as given (empty ones dropped), to build the next page's link.
    var parameters: [(name: String, value: String)]

    static let names: Set<String> = ["q", "user", "status", "channel", "product", "from", "to", "cursor", "limit"]

    /// Parses `uri`'s query; `allowed` adds names the caller handles itself (ignored here); `channels`: the ones a
    /// `channel` filter may name (the server's). An empty value is an unfilled field of the console's form when
    /// `emptyMeansAbsent`; the API refuses it.
    init(
        _ uri: URI, zone: TimeZone, channels: [Channel], defaultLimit: Int = 50, allowed: Set<String> = [],
        emptyMeansAbsent: Bool = true
    ) throws(AdminInputError) {
        var values: [String: String] = [:]
        var given: [(name: String, value: String)] = []
        for (name, value) in try Self.parameters(uri.query ?? "") {
            guard Self.names.contains(name) || allowed.contains(name) else {
                throw AdminInputError(
                    field: String(name.prefix(32)),
                    message: "is not a filter; use \(Self.names.sorted().joined(separator: ", "))")
            }
            guard values[name] == nil else { throw AdminInputError(field: name, message: "is given more than once") }
            guard emptyMeansAbsent || !value.isEmpty || !Self.names.contains(name) else {
                throw AdminInputError(field: name, message: "is empty; leave the parameter out instead")
            }
            values[name] = value
            if Self.names.contains(name), !value.isEmpty, name != "cursor" { given.append((name, value)) }
        }
        func text(_ name: String, max: Int) throws(AdminInputError) -> String? {
            guard let value = values[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            guard value.unicodeScalars.count <= max,
                value.unicodeScalars.allSatisfy({ !CharacterSet.controlCharacters.contains($0) })
            else {
                throw AdminInputError(field: name, message: "must be at most \(max) printable characters")
            }
            return value
        }
        var query = OrderQuery(limit: defaultLimit)
        query.search = try text("q", max: 128)
        query.userID = try text("user", max: 128)
        query.productID = try text("product", max: 64)
        if let status = try text("status", max: 16) {
            guard let parsed = OrderStatus(rawValue: status) else {
                throw AdminInputError(
                    field: "status",
                    message: "must be one of \(OrderStatus.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            query.status = parsed
        }
        if let channel = try text("channel", max: 16) {
            guard let parsed = Channel(rawValue: channel), channels.contains(parsed) else {
                throw AdminInputError(
                    field: "channel", message: "must be one of \(channels.map(\.rawValue).joined(separator: ", "))")
            }
            query.channel = parsed
        }
        let calendar = Calendar.gregorian(in: zone)
        if let from = try text("from", max: 10) { query.createdFrom = try Self.day(from, field: "from", calendar) }
        if let to = try text("to", max: 10) {
            let start = try Self.day(to, field: "to", calendar)
            query.createdBefore = calendar.date(byAdding: .day, value: 1, to: start)
        }
        if let from = query.createdFrom, let before = query.createdBefore, before <= from {
            throw AdminInputError(field: "to", message: "must not be before 'from'")
        }
        if let cursor = try text("cursor", max: 40) {
            guard let parsed = OrderCursor(cursor) else {
                throw AdminInputError(
                    field: "cursor",
                    message: "is not a cursor this server gave (take next_cursor from the previous page)")
            }
            query.after = parsed
        }
        if let limit = try text("limit", max: 3) {
            guard let parsed = Int(limit), (1...OrderQuery.maxLimit).contains(parsed) else {
                throw AdminInputError(
                    field: "limit", message: "must be a whole number from 1 to \(OrderQuery.maxLimit)")
            }
            query.limit = parsed
        }
        self.query = query
        self.parameters = given
    }

    /// The query's name/value pairs, decoded as an HTML form encodes them (`+` is a space, then percent-escapes);
    /// at most 32 of them.
    static func parameters(_ query: String) throws(AdminInputError) -> [(String, String)] {
        let pairs = query.split(separator: "&")
        guard pairs.count <= 32 else { throw AdminInputError(field: "query", message: "has more than 32 parameters") }
        return try pairs.map { (pair) throws(AdminInputError) -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) throws(AdminInputError) -> String {
                guard let decoded = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
                    throw AdminInputError(field: String(parts[0].prefix(32)), message: "is not valid percent-encoding")
                }
                return decoded
            }
            return (try decode(parts[0]), parts.count == 2 ? try decode(parts[1]) : "")
        }
    }

    /// The start of a `YYYY-MM-DD` day in the calendar's zone.
    private static func day(_ text: String, field: String, _ calendar: Calendar) throws(AdminInputError) -> Date {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day),
            let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
            calendar.component(.day, from: date) == day
        else { throw AdminInputError(field: field, message: "must be a day written YYYY-MM-DD, e.g. 2026-11-23") }
        return date
    }
}

/// A request parameter or form field out of shape: answered 400 with the field's name.
struct AdminInputError: APIErrorConvertible, Equatable, CustomStringConvertible {
    var field: String
    var message: String
    var description: String { "'\(field)' \(message)" }

    var apiError: APIError { .badRequest("invalid_parameter", description) }
}
