import Ledger
import Logging

extension EngineContext {
    /// Logs what recording a payment did: a flag or a conflict at warning (an operator has an order to look at, and
    /// the console's "Needs attention" counts it), anything else at info. Identifiers only, never the signal itself.
    func log(_ outcome: FulfilmentOutcome, _ message: Logger.Message, _ metadata: Logger.Metadata) {
        var metadata = metadata
        metadata["outcome"] = "\(outcome)"
        switch outcome {
        case .fulfilled, .duplicate: logger.info(message, metadata: metadata)
        case .flagged, .conflict: logger.warning(message, metadata: metadata)
        }
    }
}
