extension ZipArchive {
    /// One entry's bytes a piece at a time (inflated as they are asked for), its size and CRC-32 checked against the
    /// directory when it ends: a large file is never whole in memory.
    public struct EntryReader {
        let entry: Entry
        let name: String
        private let inflater: Inflater?
        private let stored: ArraySlice<UInt8>
        private var offset: Int
        private var size = 0
        private var crc: UInt32 = 0
        private var ended = false

        init(entry: Entry, name: String, data: ArraySlice<UInt8>, maxBytes: Int) throws(ArchiveError) {
            switch entry.method {
            case 0: inflater = nil
            case 8: inflater = try Inflater(data, wrapping: .raw, maxBytes: maxBytes)
            default: throw .unsupported("\(name): compression method \(entry.method)")
            }
            self.entry = entry
            self.name = name
            stored = data
            offset = data.startIndex
        }

        /// The next piece (never empty), or nil at the end, where the size and CRC-32 must be the directory's.
        public mutating func next() throws(ArchiveError) -> [UInt8]? {
            guard !ended else { return nil }
            let piece: [UInt8]?
            if let inflater {
                piece = try inflater.next()
            } else if offset < stored.endIndex {
                let end = min(offset + (1 << 16), stored.endIndex)
                piece = Array(stored[offset..<end])
                offset = end
            } else {
                piece = nil
            }
            guard let piece else {
                ended = true
                guard size == entry.size else {
                    throw .malformed("\(name): \(size) bytes, the directory says \(entry.size)")
                }
                guard crc == entry.crc else { throw .checksumMismatch(name) }
                return nil
            }
            size += piece.count
            guard size <= entry.size else {
                throw .malformed("\(name): more than the \(entry.size) bytes the directory says")
            }
            crc = Zlib.crc32(piece, continuing: crc)
            return piece
        }
    }
}
