import HTTPTypes
import Hummingbird
import NIOCore

/// What every provider's notification route shares: the headers a notification is stored with, and plain answers.
enum ProviderNotification {
    /// The longest header value a provider notification is kept with: every header a provider signs or sends is far
    /// shorter (a WeChat Pay signature by a 4096-bit key is 684 bytes of base64).
    static let maxHeaderBytes = 1024

    /// The headers of `names` a notification is verified and stored with (a missing content type as empty); nil when
    /// one is longer than ``maxHeaderBytes``: such a request is refused before it is stored, so nobody can make the
    /// inbox keep what they like.
    static func keptHeaders(_ request: Request, _ names: [String]) -> [String: String]? {
        var kept: [String: String] = [:]
        for name in names {
            guard let field = HTTPField.Name(name) else { continue }
            let value = request.headers.value(of: field)
            if let value, value.utf8.count > maxHeaderBytes { return nil }
            if let value { kept[name] = value } else if field == .contentType { kept[name] = "" }
        }
        return kept
    }

    /// A plain-text answer.
    static func text(_ text: String, status: HTTPResponse.Status) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
