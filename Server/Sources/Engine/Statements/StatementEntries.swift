/// A statement's entries, read from the start each time they are asked for: a provider's file is kept as it came
/// (compressed) and parsed again a piece at a time, so that a day of a million lines is never whole in memory. A file
/// is read once to its end when it is published (``checked(open:)``), so a file that does not add up is refused
/// before anything is compared.
public struct StatementEntries: Sendable {
    /// How many entries a read yields.
    public let count: Int
    private let open: @Sendable () throws -> any StatementEntryReader

    /// Entries held in memory (an API's answer, a test's).
    public init(_ entries: [StatementEntry]) {
        count = entries.count
        open = { ListedEntries(entries: entries) }
    }

    /// Reads a file's entries once to the end (checking every line and the file's own totals) and keeps the means
    /// to read them again; returns them and what the file says it holds.
    public static func checked(open: @escaping @Sendable () throws -> any StatementEntryReader) throws
        -> (entries: StatementEntries, totals: StatementTotals?)
    {
        var reader = try open()
        var count = 0
        while try reader.next() != nil { count += 1 }
        return (StatementEntries(count: count, open: open), reader.totals)
    }

    private init(count: Int, open: @escaping @Sendable () throws -> any StatementEntryReader) {
        self.count = count
        self.open = open
    }

    /// A reader from the first entry.
    public func reader() throws -> any StatementEntryReader { try open() }
}

/// Reads a statement's entries one at a time.
public protocol StatementEntryReader {
    /// The next entry; nil at the end, once the file's own totals were checked.
    mutating func next() throws -> StatementEntry?
    /// What the file says it holds, once ``next()`` returned nil; nil when the provider states no totals.
    var totals: StatementTotals? { get }
}

/// Entries held in memory.
private struct ListedEntries: StatementEntryReader {
    let entries: [StatementEntry]
    var position = 0

    mutating func next() throws -> StatementEntry? {
        guard position < entries.count else { return nil }
        defer { position += 1 }
        return entries[position]
    }

    var totals: StatementTotals? { nil }
}
