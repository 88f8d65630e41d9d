/// Why a compressed file from outside was refused.
public enum ArchiveError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not what the format says (a record cut short, an offset outside the file, bad deflate data).
    case malformed(String)
    /// A feature this reader refuses rather than guesses at (encryption, zip64, a compression method).
    case unsupported(String)
    /// More entries or bytes than the caller allows.
    case tooLarge(String)
    /// The entry's CRC-32 is not the one the archive records.
    case checksumMismatch(String)

    public var description: String {
        switch self {
        case .malformed(let detail): "malformed archive: \(detail)"
        case .unsupported(let detail): "unsupported archive: \(detail)"
        case .tooLarge(let detail): "archive too large: \(detail)"
        case .checksumMismatch(let name): "CRC-32 mismatch in \(name)"
        }
    }
}
