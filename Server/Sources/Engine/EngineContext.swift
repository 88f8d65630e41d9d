import Ledger
import Logging
import OrderSafeModel

/// What every channel of the engine works against: the ledger, the catalog orders are priced from, the clock and
/// the log. Built once in the wiring and handed to each channel.
public struct EngineContext: Sendable {
    public let ledger: any LedgerStore
    public let catalog: ActiveCatalog
    public let clock: any WallClock
    public let logger: Logger

    public init(ledger: any LedgerStore, catalog: ActiveCatalog, clock: any WallClock, logger: Logger) {
        self.ledger = ledger
        self.catalog = catalog
        self.clock = clock
        self.logger = logger
    }
}
