import Foundation
import LedgerTestSupport
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// The App Store submission's body is read by one strict scan, not `JSONDecoder`: it must accept exactly the bodies
/// the decoder and the member checks accept, with the same values, and refuse the rest with `invalid_json`.
@Suite("API bodies: the submission read directly, as JSONDecoder reads it")
struct APIBodyTests {
    /// A body's value, or the code of the error it is refused with.
    enum Outcome: Equatable {
        case value(AppStoreSubmission)
        case refused(String)
    }

    /// The decoder's answer and the direct reader's.
    static func both(_ bytes: [UInt8]) throws -> (decoded: Outcome, read: Outcome) {
        func outcome(_ body: () throws -> AppStoreSubmission) throws -> Outcome {
            do {
                return .value(try body())
            } catch let error as APIError {
                return .refused(error.code)
            }
        }
        let read = try #require(AppStoreSubmission.read)
        return (
            try outcome { try APIBody.decoded(AppStoreSubmission.self, from: bytes) },
            try outcome { try APIBody.read(bytes, with: read) }
        )
    }

    static let bodies: [String] = [
        #"{"signed_transaction":"eyJ.eyJ.sig"}"#,
        #" { "receipt" : "MIIT" , "transaction_id":"2000000000000001", "application_username":"u#OS1" } "#,
        #"{}"#, #"{"signed_transaction":"a\/b\"c\\d\u00e9\ud83d\ude00\n"}"#, #"{"receipt":"订单✓"}"#,
        #"{"signed_transaction":"x","signed_transaction":"y"}"#, #"{"signed_transaction":null}"#, #"{"other":"x"}"#,
        #"{"signed_transaction":5}"#, #"{"signed_transaction":{"a":1,"a":2}}"#, #"{"signed_transaction":["x"]}"#,
        #"{"signed_transaction":true}"#, #"{"signed_transaction":"x",}"#, #"{"signed_transaction":"x"} x"#,
        #"{"signed_transaction":"x""#, #"{"signed_transaction":"\ud800"}"#, #"{"signed_transaction":"\udc00x"}"#,
        #"{"signed_transaction":"\x"}"#, #"{"signed_transaction":"\u12"}"#, "{\"signed_transaction\":\"a\tb\"}",
        #"[]"#, #""x""#, #"null"#, #"{"signed\u005ftransaction":"x"}"#, #"{signed_transaction:"x"}"#,
        #"{"receipt":'x'}"#,
        "\u{FEFF}{\"receipt\":\"x\"}", #"{"receipt":"x"}{"#, #"{"receipt"  :  "x"  ,  "transaction_id"  :  "1"}"#,
    ]

    @Test("the same value or the same refusal, for well-formed, malformed and hostile bodies")
    func sameAsDecoder() throws {
        for body in Self.bodies + [
            String(
                decoding: [0x7B, 0x22, 0x72, 0x65, 0x63, 0x65, 0x69, 0x70, 0x74, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D],
                as: UTF8.self)
        ] {
            let (decoded, read) = try Self.both(Array(body.utf8))
            #expect(decoded == read, "\(body)")
        }
        // A byte-order mark hid the body from the member checks: duplicate, unknown and null members passed.
        for hidden in [
            #"{"signed_transaction":"a","signed_transaction":"b"}"#, #"{"recEipt":"x"}"#, #"{"receipt":null}"#,
        ] {
            let (decoded, read) = try Self.both(Array("\u{FEFF}\(hidden)".utf8))
            #expect(decoded == .refused("invalid_json") && read == .refused("invalid_json"), "\(hidden)")
        }
        let invalidUTF8: [UInt8] = Array(#"{"receipt":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        let (decoded, read) = try Self.both(invalidUTF8)
        #expect(decoded == read)
    }

    @Test("10,000 bodies with random bytes changed, added or removed: the same value or the same refusal")
    func mutations() throws {
        var random = SeededRandom(state: 20_261_125)
        let seeds = (Self.bodies.prefix(5) + ["\u{FEFF}{\"receipt\":\"x\"}"]).map { Array($0.utf8) }
        let alphabet: [UInt8] =
            Array(#"{}[]":,\ /nu0123456789abcdefABCDEF-+.eEtrlsx"#.utf8) + [
                0x00, 0x09, 0x0A, 0x1F, 0x7F, 0xC3, 0xA9, 0xE8, 0xFF,
            ]
        var disagreements: [String] = []
        for _ in 0..<10_000 {
            var bytes = seeds.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let index = Int.random(in: 0..<max(1, bytes.count), using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0 where !bytes.isEmpty: bytes[index] = alphabet.randomElement(using: &random)!
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: min(index, bytes.count))
                default: if !bytes.isEmpty { bytes.remove(at: index) }
                }
            }
            let (decoded, read) = try Self.both(bytes)
            if decoded != read {
                disagreements.append("\(bytes.map { String(format: "%02x", $0) }.joined()): \(decoded) vs \(read)")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count): \(disagreements.prefix(5))")
    }
}
