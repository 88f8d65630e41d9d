extension JSONObject {
    /// The object as one line of JSON, the members of it and of every object within in the byte order of their
    /// names; numbers and literals exactly as written, strings too but for `\/`, written `/`. The same text for the same content in whichever
    /// order a signer wrote it — what `JSONSerialization`'s `sortedKeys` gave, without its locale-aware comparisons
    /// and bridging (they were most of `ordersafe appstore verify`'s time per file).
    public var sortedText: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        write(into: &output)
        return output
    }

    private func write(into output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        let sorted = members.sorted { bytes[$0.name].lexicographicallyPrecedes(bytes[$1.name]) }
        for (index, member) in sorted.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            Self.writeString(bytes[member.name.lowerBound - 1..<member.name.upperBound + 1], into: &output)
            output.append(UInt8(ascii: ":"))
            Self.writeValue(bytes[member.value], of: bytes, into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// A value the object's scan accepted (nesting within its depth bound): objects sorted, arrays element by
    /// element, anything else copied.
    private static func writeValue(_ value: ArraySlice<UInt8>, of bytes: [UInt8], into output: inout [UInt8]) {
        switch value.first {
        case UInt8(ascii: "{"):
            if let object = try? JSONObject(bytes, range: value.startIndex..<value.endIndex) {
                object.write(into: &output)
            } else {
                output.append(contentsOf: value)
            }
        case UInt8(ascii: "["):
            output.append(UInt8(ascii: "["))
            for (index, element) in JSONArray.elements(value).enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeValue(element, of: bytes, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case UInt8(ascii: "\""):
            writeString(value, into: &output)
        default:
            output.append(contentsOf: value)
        }
    }

    /// A string literal as written, its escaped solidus (`\/`, which nothing needs) written `/`.
    private static func writeString(_ literal: ArraySlice<UInt8>, into output: inout [UInt8]) {
        var index = literal.startIndex
        while index < literal.endIndex {
            let byte = literal[index]
            if byte == UInt8(ascii: "\\"), index + 1 < literal.endIndex {
                let next = literal[index + 1]
                if next != UInt8(ascii: "/") { output.append(byte) }
                output.append(next)
                index += 2
            } else {
                output.append(byte)
                index += 1
            }
        }
    }
}
