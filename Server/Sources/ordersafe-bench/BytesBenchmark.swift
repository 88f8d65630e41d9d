import ChannelSupport
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import Sandbox

/// What a submission's text costs before anything is verified, on a sandbox signed transaction of the size Apple
/// signs (the chain's 3 KiB header, the payload, the signature), each beside the byte-by-byte or Foundation way it
/// replaced, measured in the same run on one core: the JSON string's end found (`ByteScan.firstJSONSpecial` against a
/// loop over each byte), the 3 KiB header compared (`ByteScan.equal` against `Array`'s `==`), and the payload decoded
/// (`Base64URL.decode` against the standard alphabet's copy handed to Foundation's decoder).
enum BytesBenchmark {
    static func run() async throws -> Bool {
        let authority = try SandboxAppStoreCA(now: Date(timeIntervalSince1970: 1_795_000_000))
        let jws = Array(try authority.sign(AppStoreBenchmark.transaction).utf8)
        let dots = jws.indices.filter { jws[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else { fatalError("a JWS has three segments") }
        let header = Array(jws[..<dots[0]])
        let payload = jws[(dots[0] + 1)..<dots[1]]
        guard Base64URL.decode(payload) == foundationDecode(payload) else { fatalError("the decoders disagree") }

        print("A submission's text (one core, release build; a \(jws.count)-byte signed transaction)")
        // Each call starts one byte further along (wrapping at sixteen, a vector's width) and compares with one of
        // two copies, so that no answer can be worked out once and reused across calls.
        var sink = 0
        var call = 0
        let scanned = await operationsPerSecond {
            call &+= 1
            sink &+= jws.withUnsafeBufferPointer { ByteScan.firstJSONSpecial(in: $0, from: call & 15) }
        }
        let looped = await operationsPerSecond {
            call &+= 1
            sink &+= byteByByte(jws, from: call & 15)
        }
        compare("its JSON string's end found, sixteen bytes at a time", scanned, "byte by byte", looped)
        let copies = [header.map { $0 }, header.map { $0 }]  // their own storage, as a request's bytes and a key's are
        let compared = await operationsPerSecond {
            call &+= 1
            sink &+= ByteScan.equal(header[...], copies[call & 1][...]) ? 1 : 0
        }
        let equated = await operationsPerSecond {
            call &+= 1
            sink &+= header == copies[call & 1] ? 1 : 0
        }
        compare("its \(header.count)-byte header compared (memcmp)", compared, "Array ==", equated)
        let decoded = await operationsPerSecond { sink &+= Base64URL.decode(payload)?.count ?? 0 }
        let founded = await operationsPerSecond { sink &+= foundationDecode(payload)?.count ?? 0 }
        compare("its \(payload.count)-byte payload decoded", decoded, "through Foundation", founded)
        precondition(sink > 0, "every measured call's answer is kept, so none is optimised away")
        return true
    }

    private static func compare(_ name: String, _ ours: Double, _ baselineName: String, _ baseline: Double) {
        report(name, ours)
        report("  \(baselineName)", baseline)
        print(String(format: "  ratio: %.2f", ours / baseline))
    }

    /// The loop `JSONText` and `RawJSONMembers` ran before.
    private static func byteByByte(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return index }
            index += 1
        }
        return index
    }

    /// How `Base64URL.decode` decoded before: the standard alphabet's copy, padded, through Foundation.
    private static func foundationDecode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var standard = text.map { byte -> UInt8 in
            switch byte {
            case UInt8(ascii: "-"): UInt8(ascii: "+")
            case UInt8(ascii: "_"): UInt8(ascii: "/")
            default: byte
            }
        }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(standard)).map(Array.init)
    }
}
