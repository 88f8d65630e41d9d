/// A channel whose signals this server's settings can hold (``InboxVerdict/held``: the provider's, not verifiable
/// with the settings as they are) verifies them again once an operator fixed the settings, and records those that
/// verify.
public protocol HeldSignalReplayer: Sendable {
    /// Replays every held signal of the channel, oldest first, a page at a time.
    func replayHeld(pageSize: Int) async throws -> HeldReplay
}

/// What a replay of held signals did.
public struct HeldReplay: Sendable, Hashable, Codable {
    /// Verified now and recorded (or found recorded) for their submitters; notifications verified and applied.
    public var recorded: Int
    /// Still not verifiable with the settings as they are.
    public var stillHeld: Int
    /// Verified, but not recordable now (a product missing from the catalog, the database): kept as failed.
    public var failed: Int

    public init(recorded: Int = 0, stillHeld: Int = 0, failed: Int = 0) {
        self.recorded = recorded
        self.stillHeld = stillHeld
        self.failed = failed
    }

    enum CodingKeys: String, CodingKey {
        case recorded
        case stillHeld = "still_held"
        case failed
    }
}
