import Ledger
import Logging

extension EngineContext {
    /// Logs what recording a payment did: a flag or a conflict at warning (an operator has an order to look at, and
    /// the console's "Needs attention" counts it), anything else at info. Identifiers only, never the signal itself;
    /// nothing is formatted unless the level is logged (this runs for every payment).
    func log(
        _ outcome: FulfilmentOutcome, _ message: @autoclosure () -> Logger.Message,
        _ metadata: @autoclosure () -> Logger.Metadata
    ) {
        switch outcome {
        case .fulfilled, .duplicate:
            logger.info(message(), metadata: metadata().merging(["outcome": "\(outcome)"]) { $1 })
        case .flagged, .conflict:
            logger.warning(message(), metadata: metadata().merging(["outcome": "\(outcome)"]) { $1 })
        }
    }
}
