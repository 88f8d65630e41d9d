/// Where an order is in its lifecycle: `created → paying → paid → fulfilled`, or one of the exits.
public enum OrderStatus: String, Codable, CaseIterable, Hashable, Sendable {
    case created
    /// The app handed the order to the provider; payment is under way.
    case paying
    /// The provider confirmed payment; grants not yet applied.
    case paid
    /// Paid and granted: the end of the happy path.
    case fulfilled
    /// Cancelled by the user or merchant before payment.
    case cancelled
    /// Expired unpaid and closed at the provider.
    case closed
    case failed
    case refunded
    case revoked
    /// Needs a human: amount mismatch, user conflict, or a reversal that would go negative.
    case flagged

    /// True when no further provider signal can move the order without a human.
    public var isFinal: Bool {
        switch self {
        case .created, .paying, .paid: false
        case .fulfilled, .cancelled, .closed, .failed, .refunded, .revoked, .flagged: true
        }
    }
}
