import ChannelSupport

/// The strict JSON readers every provider payload goes through: members, strings, integers, nested objects, arrays.
enum JSONFuzz {
    static func run(_ bytes: [UInt8]) {
        _ = try? RawJSONMembers.extract(bytes)
        guard let object = try? JSONObject(bytes) else { return }
        for name in ["a", "signedPayload", "data", "resource", "notificationType", "transactionId", "x5c", "price"] {
            _ = try? object.optionalString(name)
            _ = try? object.optionalInt(name)
            _ = try? object.optionalFlooredInt(name)
            _ = try? object.optionalBool(name)
            _ = try? object.optionalStrings(name)
            if let nested = try? object.optionalObject(name) { _ = try? nested.optionalString(name) }
            if let elements = try? object.optionalArray(name) {
                for element in elements { _ = JSONString.decode(element) }
            }
        }
    }
}
