/// Writes a zip archive of deflated entries (what the sandboxes publish as a provider would): local headers, the
/// central directory and its end record, no zip64. Names are stored as given; `utf8Names` sets flag bit 11.
public struct ZipArchiveWriter: Sendable {
    private var output: [UInt8] = []
    private var directory: [UInt8] = []
    private var count = 0
    private let utf8Names: Bool

    public init(utf8Names: Bool) {
        self.utf8Names = utf8Names
    }

    /// Adds one file, deflated, stamped with the DOS `date` and `time` given (zip's own encoding).
    public mutating func add(name: [UInt8], contents: [UInt8], dosDate: UInt16 = 0x21, dosTime: UInt16 = 0) {
        let compressed = Zlib.deflate(contents, wrapping: .raw)
        let crc = Zlib.crc32(contents)
        let flags: UInt16 = utf8Names ? 0x800 : 0
        let offset = output.count
        // version needed 2.0, flags, method 8, time, date, CRC, sizes, name and extra lengths.
        var shared: [UInt8] = []
        Self.append16(&shared, 20)
        Self.append16(&shared, flags)
        Self.append16(&shared, 8)
        Self.append16(&shared, dosTime)
        Self.append16(&shared, dosDate)
        Self.append32(&shared, crc)
        Self.append32(&shared, UInt32(compressed.count))
        Self.append32(&shared, UInt32(contents.count))
        Self.append16(&shared, UInt16(name.count))
        Self.append16(&shared, 0)
        Self.append32(&output, 0x0403_4b50)
        output += shared + name + compressed
        Self.append32(&directory, 0x0201_4b50)
        Self.append16(&directory, 20)  // made by: MS-DOS, 2.0
        directory += shared
        Self.append16(&directory, 0)  // comment length
        Self.append16(&directory, 0)  // disk
        Self.append16(&directory, 0)  // internal attributes
        Self.append32(&directory, 0)  // external attributes
        Self.append32(&directory, UInt32(offset))
        directory += name
        count += 1
    }

    /// The archive's bytes.
    public func finished() -> [UInt8] {
        var bytes = output + directory
        Self.append32(&bytes, 0x0605_4b50)
        Self.append16(&bytes, 0)
        Self.append16(&bytes, 0)
        Self.append16(&bytes, UInt16(count))
        Self.append16(&bytes, UInt16(count))
        Self.append32(&bytes, UInt32(directory.count))
        Self.append32(&bytes, UInt32(output.count))
        Self.append16(&bytes, 0)
        return bytes
    }

    private static func append16(_ bytes: inout [UInt8], _ value: UInt16) {
        bytes += [UInt8(value & 0xFF), UInt8(value >> 8)]
    }

    private static func append32(_ bytes: inout [UInt8], _ value: UInt32) {
        append16(&bytes, UInt16(value & 0xFFFF))
        append16(&bytes, UInt16(value >> 16))
    }
}
