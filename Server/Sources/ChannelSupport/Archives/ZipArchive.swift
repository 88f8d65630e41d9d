/// A zip archive read strictly from its bytes (PKWARE APPNOTE 6.3: the end record, the central directory, each
/// entry's local header): stored and deflated entries, no encryption, no zip64, no multi-disk archive. Every offset
/// and length is checked against the file before it is used, and an entry's CRC-32 is checked when it is read.
public struct ZipArchive: Sendable {
    /// One file in the archive, as its central directory describes it.
    public struct Entry: Sendable, Hashable {
        /// The name's bytes as stored: UTF-8 when ``isUTF8Name``, else the writer's code page (Alipay's are GBK).
        public var nameBytes: [UInt8]
        /// General-purpose flag bit 11: the name is UTF-8.
        public var isUTF8Name: Bool
        /// The uncompressed size the archive records.
        public var size: Int
        let method: UInt16
        let crc: UInt32
        let compressedSize: Int
        let localHeaderOffset: Int
    }

    public let entries: [Entry]
    private let bytes: [UInt8]

    /// Reads the directory of `bytes`; refuses more than `maxEntries` entries.
    public init(_ bytes: [UInt8], maxEntries: Int = 64) throws(ArchiveError) {
        self.bytes = bytes
        let end = try Self.endRecord(in: bytes)
        let count = Int(Self.uint16(bytes, end + 10))
        let directorySize = Int(Self.uint32(bytes, end + 12))
        let directoryOffset = Int(Self.uint32(bytes, end + 16))
        guard Self.uint16(bytes, end + 4) == 0, Self.uint16(bytes, end + 6) == 0,
            Int(Self.uint16(bytes, end + 8)) == count
        else { throw .unsupported("an archive split over several disks") }
        guard count != 0xFFFF, directorySize != 0xFFFF_FFFF, directoryOffset != 0xFFFF_FFFF else {
            throw .unsupported("zip64")
        }
        guard count <= maxEntries else { throw .tooLarge("\(count) entries (at most \(maxEntries))") }
        guard directoryOffset <= end, directorySize <= end - directoryOffset else {
            throw .malformed("the central directory lies outside the file")
        }
        var entries: [Entry] = []
        var cursor = directoryOffset
        let directoryEnd = directoryOffset + directorySize
        for index in 0..<count {
            guard directoryEnd - cursor >= 46, Self.uint32(bytes, cursor) == 0x0201_4b50 else {
                throw .malformed("central directory entry \(index + 1) is cut short or mis-signed")
            }
            let flags = Self.uint16(bytes, cursor + 8)
            let nameLength = Int(Self.uint16(bytes, cursor + 28))
            let extraLength = Int(Self.uint16(bytes, cursor + 30))
            let commentLength = Int(Self.uint16(bytes, cursor + 32))
            guard directoryEnd - cursor - 46 >= nameLength + extraLength + commentLength else {
                throw .malformed("central directory entry \(index + 1) runs past the directory")
            }
            guard flags & 0x41 == 0 else { throw .unsupported("an encrypted entry") }
            let entry = Entry(
                nameBytes: Array(bytes[cursor + 46..<cursor + 46 + nameLength]), isUTF8Name: flags & 0x800 != 0,
                size: Int(Self.uint32(bytes, cursor + 24)), method: Self.uint16(bytes, cursor + 10),
                crc: Self.uint32(bytes, cursor + 16), compressedSize: Int(Self.uint32(bytes, cursor + 20)),
                localHeaderOffset: Int(Self.uint32(bytes, cursor + 42)))
            guard entry.size != 0xFFFF_FFFF, entry.compressedSize != 0xFFFF_FFFF,
                entry.localHeaderOffset != 0xFFFF_FFFF
            else { throw .unsupported("zip64") }
            entries.append(entry)
            cursor += 46 + nameLength + extraLength + commentLength
        }
        self.entries = entries
    }

    /// The entry's bytes a piece at a time (``EntryReader``); refused past `maxBytes`. Errors name the entry `name`
    /// (the caller's decoding of a name in another code page), else its bytes read as UTF-8.
    public func reader(of entry: Entry, maxBytes: Int, name: String? = nil) throws(ArchiveError) -> EntryReader {
        let name = name ?? String(decoding: entry.nameBytes, as: UTF8.self)
        guard entry.size <= maxBytes else { throw .tooLarge("\(name): \(entry.size) bytes (at most \(maxBytes))") }
        let header = entry.localHeaderOffset
        guard bytes.count - 30 >= header, Self.uint32(bytes, header) == 0x0403_4b50 else {
            throw .malformed("\(name): no local header at \(header)")
        }
        let start = header + 30 + Int(Self.uint16(bytes, header + 26)) + Int(Self.uint16(bytes, header + 28))
        guard start <= bytes.count, entry.compressedSize <= bytes.count - start else {
            throw .malformed("\(name): its data runs past the end of the file")
        }
        return try EntryReader(
            entry: entry, name: name, data: bytes[start..<start + entry.compressedSize], maxBytes: maxBytes)
    }

    /// The end of central directory record: the last signature within the 22 bytes plus the largest comment.
    private static func endRecord(in bytes: [UInt8]) throws(ArchiveError) -> Int {
        guard bytes.count >= 22 else { throw .malformed("\(bytes.count) bytes: shorter than an empty archive") }
        var offset = bytes.count - 22
        let lowest = max(0, bytes.count - 22 - 0xFFFF)
        while offset >= lowest {
            if uint32(bytes, offset) == 0x0605_4b50, offset + 22 + Int(uint16(bytes, offset + 20)) == bytes.count {
                return offset
            }
            offset -= 1
        }
        throw .malformed("no end of central directory record")
    }

    static func uint16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(uint16(bytes, offset)) | UInt32(uint16(bytes, offset + 2)) << 16
    }
}
