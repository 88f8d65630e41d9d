import ChannelSupport
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel

/// How an API request body becomes its type, with a 400 `invalid_json` naming what is wrong: well-formed JSON, no
/// member named twice anywhere, only the documented members, none of them `null`, each of its type.
enum APIBody {
    static func decode<T: APIRequestBody>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if let read = T.read { return try self.read(bytes, with: read) }
        return try decoded(type, from: bytes)
    }

    /// Through `JSONDecoder`, then the member checks (which see the body without a byte-order mark, which the decoder
    /// skips: with one, they once saw no object and let duplicate, unknown and null members through).
    static func decoded<T: APIRequestBody>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let bytes = withoutByteOrderMark(bytes)
        let value: T
        do {
            value = try OrderSafeJSON.decoder().decode(T.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw APIError.badRequest("invalid_json", error.readableDescription)
        }
        do {
            try JSONObject.requireUniqueMembers(bytes)
        } catch {
            throw APIError.badRequest("invalid_json", "\(error)")
        }
        if let object = try? JSONObject(bytes) {
            try requireDocumentedMembers(object, of: T.self)
        }
        return value
    }

    /// A body whose members are all strings, read by one strict scan (``JSONObject``, which refuses a name given
    /// twice) and no decoder; a leading byte-order mark is skipped, as `JSONDecoder` skips it.
    static func read<T: APIRequestBody>(_ bytes: [UInt8], with read: (JSONObject) throws(JSONObject.Error) -> T) throws
        -> T
    {
        do {
            let object = try JSONObject(withoutByteOrderMark(bytes))
            try requireDocumentedMembers(object, of: T.self)
            return try read(object)
        } catch let error as JSONObject.Error {
            throw APIError.badRequest("invalid_json", "\(error)")
        }
    }

    /// `bytes` without a leading UTF-8 byte-order mark.
    private static func withoutByteOrderMark(_ bytes: [UInt8]) -> [UInt8] {
        bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
    }

    /// Every member is one the document names, and none is `null` (an optional member is left out instead).
    private static func requireDocumentedMembers<T: APIRequestBody>(_ object: JSONObject, of _: T.Type) throws {
        for name in object.memberNames {
            guard T.members.contains(name) else {
                throw APIError.badRequest(
                    "invalid_json",
                    "unknown member '\(name.prefix(64))'; expected \(T.members.sorted().joined(separator: ", "))")
            }
            if object.raw(name)?.elementsEqual("null".utf8) == true {
                throw APIError.badRequest("invalid_json", "'\(name)' is null")
            }
        }
    }
}
