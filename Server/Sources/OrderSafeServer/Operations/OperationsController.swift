import Foundation
import Hummingbird
import Ledger
import Prometheus

/// `/healthz` (the process answers), `/readyz` (database reachable and migrated), `/metrics` (Prometheus),
/// and `/openapi.json` (the API contract).
struct OperationsController {
    let database: LedgerDatabase
    let ledger: SQLLedger
    let registry: PrometheusCollectorRegistry
    let openAPIDocument: Data

    struct Status: Encodable {
        var status: String
    }

    func addRoutes(to router: Router<OrderSafeRequestContext>) {
        router.get("healthz") { _, _ in try Response.json(Status(status: "ok")) }
        router.get("readyz") { _, context in
            guard await database.ping() else {
                throw APIError(
                    status: .serviceUnavailable, code: "database_unreachable", message: "the database does not answer")
            }
            do {
                try await ledger.checkSchema()
            } catch let error as LedgerError {
                throw APIError(status: .serviceUnavailable, code: "schema_not_current", message: error.description)
            }
            return try Response.json(Status(status: "ready"))
        }
        router.get("metrics") { _, _ in
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
        }
        router.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: openAPIDocument)))
        }
    }
}
