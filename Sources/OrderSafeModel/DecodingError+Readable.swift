extension DecodingError {
    /// A one-line explanation naming the JSON path, for error messages shown to API callers and operators. The
    /// server's (`@_spi(OrderSafeServer)`): OrderSafeKit re-exports this module, and a member added to Foundation's
    /// type would meet any other library's of the same name in an app.
    @_spi(OrderSafeServer) public var readableDescription: String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let joined = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return joined.isEmpty ? "the document" : String(joined.drop { $0 == "." })
        }
        switch self {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(type)"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(type), found null"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): required field is missing"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "not valid JSON" }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "undecodable input"
        }
    }
}
