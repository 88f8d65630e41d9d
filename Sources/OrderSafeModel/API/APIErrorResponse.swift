/// The body of every error answered by the OrderSafe API: `{"error": {"code": …, "message": …}}`.
public struct APIErrorResponse: Codable, Hashable, Sendable, Error {
    public struct Detail: Codable, Hashable, Sendable {
        /// Stable machine-readable code, e.g. `unknown_product`.
        public var code: String
        /// English explanation for developers (``PublicMessage/clean(_:)``: no source paths, bounded).
        public var message: String

        public init(code: String, message: String) {
            self.code = code
            self.message = PublicMessage.clean(message)
        }
    }

    public var error: Detail

    public init(code: String, message: String) {
        self.error = Detail(code: code, message: message)
    }
}
