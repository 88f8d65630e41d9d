import OrderSafeModel
import SQLKit
import Synchronization

/// Orders a write has inserted, as inserted: a later step of the same write that needs one (an App Store submission
/// creates its order and pays it in one write) takes it from here instead of reading the row back. An order the write
/// changes after inserting it is forgotten, so what is taken is always the row as it stands; nobody else can see
/// or change it before the write commits.
final class CreatedOrders: Sendable {
    struct Row: Sendable {
        var id: Int64
        var order: Order
        var catalogVersionID: Int64
    }

    private let rows = Mutex<[String: Row]>([:])

    func add(_ row: Row) {
        rows.withLock { $0[row.order.orderNo] = row }
    }

    /// The order numbered `orderNo`, if this write inserted it and has not changed it since; taken once.
    func take(orderNo: String) -> Row? {
        rows.withLock { $0.removeValue(forKey: orderNo) }
    }

    func forget(id: Int64) {
        rows.withLock { rows in
            if let orderNo = rows.first(where: { $0.value.id == id })?.key { rows[orderNo] = nil }
        }
    }
}

extension LedgerDatabase {
    /// The orders inserted by the write `db` is the connection of; nil outside a write.
    static func createdOrders(_ db: any SQLDatabase) -> CreatedOrders? { (db as? WriteConnection)?.createdOrders }

    /// Called by every statement that changes an order row: a copy kept by ``CreatedOrders`` is no longer the row.
    static func orderChanged(id: Int64, on db: any SQLDatabase) {
        createdOrders(db)?.forget(id: id)
    }
}
