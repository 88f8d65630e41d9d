import Hummingbird
import HummingbirdCore
import Ledger

/// Which page of an order's events `GET /v1/admin/orders/{order_no}` and the console's order page show:
/// `events_from`, the index of the first (0 by default), a multiple of ``OrderDossier/eventsPerPage``. Any other
/// parameter (besides `allowed`) is refused by name.
enum EventsPageQuery {
    static func eventsFrom(_ uri: URI, allowed: Set<String> = []) throws(AdminInputError) -> Int {
        var from: Int?
        for (name, value) in try AdminOrderQuery.parameters(uri.query ?? "") {
            if allowed.contains(name) { continue }
            guard name == "events_from" else {
                throw AdminInputError(
                    field: String(name.prefix(32)), message: "is not a parameter here; use events_from")
            }
            guard from == nil else { throw AdminInputError(field: name, message: "is given more than once") }
            guard value.utf8.count <= 9, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(value),
                number % OrderDossier.eventsPerPage == 0
            else {
                throw AdminInputError(
                    field: name, message: "must be a multiple of \(OrderDossier.eventsPerPage) below 10^9")
            }
            from = number
        }
        return from ?? 0
    }
}
