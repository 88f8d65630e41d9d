import Foundation
import Hummingbird
import NIOCore
import OrderSafeModel

extension Request {
    /// For an action that takes no body: at most an empty JSON object's few bytes are taken (and ignored); more is
    /// refused with 413 before it is read, not drained.
    func expectNoBody() async throws {
        do {
            _ = try await body.collect(upTo: Self.noBodyBytes)
        } catch is NIOTooManyBytesError {
            throw APIError(
                status: .contentTooLarge, code: "body_too_large", message: "this action takes no request body")
        }
    }

    /// What ``expectNoBody()`` lets through: `{}` and some white space, as some clients send.
    static let noBodyBytes = 16

    /// Decodes a JSON body of at most `limit` bytes, with a 4xx ``APIError`` for anything malformed.
    func decodeJSON<T: APIRequestBody>(_ type: T.Type, limit: Int) async throws -> T {
        if let contentType = headers.value(of: .contentType), !contentType.lowercased().hasPrefix("application/json") {
            throw APIError(
                status: .unsupportedMediaType, code: "unsupported_media_type",
                message: "the body must be application/json")
        }
        var body: ByteBuffer
        do {
            body = try await self.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError(status: .contentTooLarge, code: "body_too_large", message: "the body exceeds \(limit) bytes")
        }
        guard body.readableBytes > 0 else { throw APIError.badRequest("invalid_json", "the request body is empty") }
        let bytes = body.readBytes(length: body.readableBytes) ?? []
        return try APIBody.decode(T.self, from: bytes)
    }
}

extension Response {
    /// A JSON response in the API's conventions.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        json(bytes: try OrderSafeJSON.encoder().encode(value), status: status)
    }

    /// A JSON response whose body is already written.
    static func json(bytes: some Sequence<UInt8>, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
