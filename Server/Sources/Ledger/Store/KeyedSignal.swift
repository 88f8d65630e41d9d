import Crypto

/// A signal with the key the inbox knows it by: its headers as stored, and the SHA-256 of those headers, a zero byte
/// and its body (of its body alone for a notification, which is one signal whoever sends it). Made once, on the
/// caller's task: the entry's insert on the writer and the process's memory of applied submissions both use it,
/// where each hashed the submission's 3.8 KiB of its own.
public struct KeyedSignal: Sendable {
    public let signal: InboundSignal
    /// The headers as the inbox stores them.
    let headers: String
    /// What identifies the signal among the entries of its channel and kind.
    public let digest: SHA256Digest
    /// The digest in lowercase hex, as `inbox.body_sha256` holds it (made once: a fresh submission asked for it six
    /// times).
    let sha256: String

    /// Throws when the headers cannot be stored (they are not encodable as JSON).
    public init(_ signal: InboundSignal) throws {
        self.signal = signal
        headers = try SQLLedger.storedHeaders(signal.headers)
        var hash = SHA256()
        // Through the hasher's buffer entry point: its `DataProtocol` one is not specialised outside swift-crypto.
        if signal.kind != .notify {
            var text = headers
            text.withUTF8 { hash.update(bufferPointer: UnsafeRawBufferPointer($0)) }
            withUnsafeBytes(of: UInt8(0)) { hash.update(bufferPointer: $0) }
        }
        signal.body.withUnsafeBytes { hash.update(bufferPointer: $0) }
        digest = hash.finalize()
        sha256 = digest.hexString
    }

    /// Where the write keeping it takes its locks among the writes of its transaction (``LedgerTransactions/
    /// atomically(lockOrder:_:)``): by its headers (whose user's rows it changes), then by its digest.
    public var lockOrder: String { headers + "\u{0}" + sha256 }
}
