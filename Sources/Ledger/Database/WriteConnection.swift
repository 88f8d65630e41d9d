import Logging
import NIOCore
import SQLKit

/// The connection a write's body is given: the writer's own, except that the changes the write holds
/// (``DeferredInserts/hold(_:)``) run before any other statement of it, so every statement sees everything the
/// write did before it. Should those changes fail, the whole write fails, even if the statement's caller catches
/// the error and goes on.
struct WriteConnection: SQLDatabase {
    let base: any SQLDatabase
    let deferred: DeferredInserts
    let failure: LedgerDatabase.FirstError

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        if deferred.holdsChanges {
            do {
                try await deferred.flushChanges(base)
            } catch {
                failure.record(error)
                throw error
            }
        }
        try await base.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<
        Void
    > {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }
}
