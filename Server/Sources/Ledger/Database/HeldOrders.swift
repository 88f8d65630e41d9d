import OrderSafeModel
import SQLKit
import Synchronization

/// Orders a write holds, as they stand: the ones it inserted, and the ones it read locked to pay them (the order an App
/// Store transaction names, read with its payment's lookup). A later step of the same write that pays one (an App
/// Store submission creates or finds its order and pays it in one write) takes it from here instead of reading the row
/// again. An order the write changes after inserting or reading it is forgotten, so what is taken is always the row
/// as it stands; nobody else can change it before the write commits (SQLite has one writer; PostgreSQL's read locked
/// it, `FOR UPDATE`).
final class HeldOrders: Sendable {
    struct Row: Sendable {
        var id: Int64
        var order: Order
        var catalogVersionID: Int64
    }

    private let rows = Mutex<[String: Row]>([:])

    func add(_ row: Row) {
        rows.withLock { $0[row.order.orderNo] = row }
    }

    /// The order numbered `orderNo`, if this write inserted it or read it locked and has not changed it since; taken
    /// once.
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
    /// The orders held by the write `db` is the connection of; nil outside a write.
    static func heldOrders(_ db: any SQLDatabase) -> HeldOrders? { db.exactly(WriteConnection.self)?.heldOrders }

    /// Called by every statement that changes an order row: a copy held by ``HeldOrders`` is no longer the row.
    static func orderChanged(id: Int64, on db: any SQLDatabase) {
        heldOrders(db)?.forget(id: id)
    }
}
