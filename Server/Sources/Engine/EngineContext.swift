import Ledger
import Logging
import OrderSafeModel

/// What a part of the engine works against: the ledger's roles it uses (`Ledger`, a composition of them such as
/// ``AlipayLedger``; the whole ledger is never handed over), the catalog orders are priced from, the clock and the
/// log. Built once in the wiring and handed to each channel, which narrows it to what its helpers use.
public struct EngineContext<Ledger: Sendable>: Sendable {
    public let ledger: Ledger
    public let catalog: ActiveCatalog
    public let clock: any WallClock
    public let logger: Logger

    public init(ledger: Ledger, catalog: ActiveCatalog, clock: any WallClock, logger: Logger) {
        self.ledger = ledger
        self.catalog = catalog
        self.clock = clock
        self.logger = logger
    }

    /// The same context over `ledger` (a write's handle, for the helpers of a step inside it).
    public func with<Other: Sendable>(ledger: Other) -> EngineContext<Other> {
        EngineContext<Other>(ledger: ledger, catalog: catalog, clock: clock, logger: logger)
    }

    /// The same context over the roles `roles` picks of this one's (usually `{ $0 }`, an existential's upcast).
    public func narrowed<Narrow: Sendable>(_ roles: (Ledger) -> Narrow) -> EngineContext<Narrow> {
        EngineContext<Narrow>(ledger: roles(ledger), catalog: catalog, clock: clock, logger: logger)
    }
}
