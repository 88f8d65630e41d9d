import Testing

@testable import ChannelSupport

/// The zip reader the providers' statements go through: what the writer deflates reads back byte for byte, a stored
/// entry assembled by hand reads too, and every lie an archive can tell (offsets, sizes, CRCs, flags, counts) is
/// refused before it is believed.
@Suite("Zip archives and zlib: strict, bounded")
struct ZipArchiveTests {
    static let text = Array(String(repeating: "支付宝交易号,商户订单号\r\n", count: 500).utf8)

    static func archive(_ files: [(String, [UInt8])] = [("a.csv", text), ("b.csv", [])]) -> [UInt8] {
        var writer = ZipArchiveWriter(utf8Names: true)
        for (name, contents) in files { writer.add(name: Array(name.utf8), contents: contents) }
        return writer.finished()
    }

    /// An entry read to its end, piece by piece, as the bills are.
    static func contents(_ archive: ZipArchive, _ entry: ZipArchive.Entry, maxBytes: Int) throws(ArchiveError)
        -> [UInt8]
    {
        var reader = try archive.reader(of: entry, maxBytes: maxBytes)
        var contents: [UInt8] = []
        while let piece = try reader.next() { contents += piece }
        return contents
    }

    @Test("what the writer deflates reads back whole, names and sizes as written")
    func roundTrip() throws {
        let bytes = Self.archive()
        #expect(bytes.count < Self.text.count / 4)
        let zip = try ZipArchive(bytes)
        #expect(zip.entries.map { String(decoding: $0.nameBytes, as: UTF8.self) } == ["a.csv", "b.csv"])
        #expect(zip.entries.allSatisfy { $0.isUTF8Name })
        #expect(try Self.contents(zip, zip.entries[0], maxBytes: 1 << 20) == Self.text)
        #expect(try Self.contents(zip, zip.entries[1], maxBytes: 1 << 20) == [])
    }

    @Test("a stored entry assembled by hand, as another writer would make it, reads back")
    func storedByHand() throws {
        let contents = Array("hello".utf8)
        let crc = Zlib.crc32(contents)
        #expect(crc == 0x3610_A686)  // the CRC-32 of "hello" (ISO-HDLC)
        func le(_ value: Int, _ width: Int) -> [UInt8] { (0..<width).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        let name = Array("h.txt".utf8)
        let common =
            le(10, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(Int(crc), 4) + le(5, 4) + le(5, 4)
            + le(name.count, 2) + le(0, 2)
        let local = [0x50, 0x4b, 0x03, 0x04] + common + name + contents
        let central =
            [0x50, 0x4b, 0x01, 0x02] + le(10, 2) + common + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0, 4) + name
        let end =
            [0x50, 0x4b, 0x05, 0x06] + le(0, 2) + le(0, 2) + le(1, 2) + le(1, 2) + le(central.count, 4)
            + le(local.count, 4) + le(0, 2)
        let zip = try ZipArchive(local + central + end)
        #expect(!zip.entries[0].isUTF8Name)
        #expect(try Self.contents(zip, zip.entries[0], maxBytes: 64) == contents)
        // The same bytes under another CRC-32: refused, not returned.
        var corrupt = local + central + end
        corrupt[local.count + 16] ^= 1
        let lying = try ZipArchive(corrupt)
        #expect(throws: ArchiveError.checksumMismatch("h.txt")) {
            try Self.contents(lying, lying.entries[0], maxBytes: 64)
        }
    }

    @Test("a cut, a flipped byte, a lying offset or an oversized entry is refused, never trusted")
    func refusals() throws {
        let bytes = Self.archive()
        for cut in [0, 10, 21, bytes.count / 2, bytes.count - 1] {
            #expect(throws: ArchiveError.self) { try ZipArchive(Array(bytes.prefix(cut))) }
        }
        // A byte of the deflated data flipped: the stream breaks or its CRC-32 differs.
        var flipped = bytes
        flipped[60] ^= 0x55
        let zip = try ZipArchive(flipped)
        #expect(throws: ArchiveError.self) { try Self.contents(zip, zip.entries[0], maxBytes: 1 << 20) }
        // The central directory's offset pointing past the file.
        var lying = bytes
        lying[lying.count - 6] = 0xFF
        #expect(throws: ArchiveError.malformed("the central directory lies outside the file")) {
            try ZipArchive(lying)
        }
        // More inflated bytes than the caller allows.
        let whole = try ZipArchive(bytes)
        #expect(throws: ArchiveError.tooLarge("a.csv: \(Self.text.count) bytes (at most 1000)")) {
            try Self.contents(whole, whole.entries[0], maxBytes: 1000)
        }
        // More entries than allowed.
        #expect(throws: ArchiveError.tooLarge("2 entries (at most 1)")) { try ZipArchive(bytes, maxEntries: 1) }
    }

    @Test("an encrypted entry, zip64 markers and an unknown method are refused by name")
    func unsupported() throws {
        let bytes = Self.archive([("a.csv", Self.text)])
        let directory = Int(ZipArchive.uint32(bytes, bytes.count - 6))
        var encrypted = bytes
        encrypted[directory + 8] |= 1
        #expect(throws: ArchiveError.unsupported("an encrypted entry")) { try ZipArchive(encrypted) }
        var zip64 = bytes
        for offset in 0..<4 { zip64[directory + 24 + offset] = 0xFF }
        #expect(throws: ArchiveError.unsupported("zip64")) { try ZipArchive(zip64) }
        var method = bytes
        method[directory + 10] = 12  // bzip2
        let archive = try ZipArchive(method)
        #expect(throws: ArchiveError.unsupported("a.csv: compression method 12")) {
            try Self.contents(archive, archive.entries[0], maxBytes: 1 << 20)
        }
    }

    @Test("a gzip member inflates whole; trailing bytes, a cut and a bomb past the limit are refused")
    func gzip() throws {
        let member = Zlib.deflate(Self.text, wrapping: .gzip)
        #expect(Array(member.prefix(2)) == [0x1F, 0x8B])
        #expect(try Zlib.inflate(member[...], wrapping: .gzip, maxBytes: 1 << 20) == Self.text)
        #expect(throws: ArchiveError.self) { try Zlib.inflate((member + [0])[...], wrapping: .gzip, maxBytes: 1 << 20) }
        #expect(throws: ArchiveError.malformed("the compressed data ends early")) {
            try Zlib.inflate(member.dropLast(10), wrapping: .gzip, maxBytes: 1 << 20)
        }
        let bomb = Zlib.deflate([UInt8](repeating: 0, count: 4 << 20), wrapping: .gzip)
        #expect(bomb.count < 8 << 10)
        #expect(
            throws: ArchiveError.tooLarge(
                "more than 1048576 bytes inflated from \(bomb.count) (a ratio or size no file has)")
        ) {
            try Zlib.inflate(bomb[...], wrapping: .gzip, maxBytes: 1 << 20)
        }
    }

    @Test("a stream inflating past a hundred times its size (beyond the first MiB) is refused, whatever the size limit")
    func inflationRatio() throws {
        let bomb = Zlib.deflate([UInt8](repeating: 0x0A, count: 8 << 20), wrapping: .gzip)
        #expect(throws: ArchiveError.self) { try Zlib.inflate(bomb[...], wrapping: .gzip, maxBytes: 1 << 30) }
        // A bill-like text (distinct rows) of the same size inflates whole.
        var rows: [UInt8] = []
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        while rows.count < 8 << 20 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            rows += Array(
                "`2026-11-25 10:00:00,`wx0000,`420000\(seed >> 20),`OS\(seed % 999_983),`SUCCESS,`6.00\n".utf8)
        }
        let bill = Zlib.deflate(rows, wrapping: .gzip)
        #expect(try Zlib.inflate(bill[...], wrapping: .gzip, maxBytes: 1 << 30).count == rows.count)
    }
}
