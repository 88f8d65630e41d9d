import ChannelSupport
import Foundation
import HTTPTypes
import Hummingbird

/// Hands an HTTP request to a simulator exactly as received (method, path and query, headers, body) and returns
/// its answer: the one bridge between Hummingbird and every simulator's `handle`.
enum SimulatorBridge {
    static func forward(_ request: Request, limit: Int, to handler: InProcessTransport.Handler) async throws -> Response
    {
        var request = request
        let body = try await request.collectBody(upTo: limit)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let answer = await handler(request.method.rawValue, request.uri.description, headers, Array(buffer: body))
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        return Response(
            status: .init(code: answer.status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: answer.body))
        )
    }
}

/// A control route's JSON body as a type, with the members it may have.
protocol SandboxBody: Decodable {
    static var members: Set<String> { get }
}

/// JSON answers of the simulators' own control routes (`pay`, `faults`).
enum SandboxJSON {
    struct BodyError: Error, CustomStringConvertible {
        var description: String
    }

    /// Decodes `T` refusing what `JSONDecoder` lets through: a member `T` does not know (a misspelt fault is not
    /// silently ignored), a `null`, a name given twice.
    static func decode<T: SandboxBody>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let object = try JSONObject(bytes)
        for name in object.memberNames {
            guard T.members.contains(name) else {
                throw BodyError(
                    description:
                        "unknown member '\(name.prefix(32))'; known: \(T.members.sorted().joined(separator: ", "))")
            }
            if object.raw(name)?.elementsEqual("null".utf8) == true {
                throw BodyError(description: "'\(name)' is null; leave it out instead")
            }
        }
        return try JSONDecoder().decode(T.self, from: Data(bytes))
    }

    static func response(_ object: [String: String], status: HTTPResponse.Status) -> Response {
        let body = (try? JSONEncoder().encode(object)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// A fault named in a `faults` request body.
enum FaultText {
    struct Unknown: Error, CustomStringConvertible {
        var text: String
        var known: String
        var description: String { "unknown fault '\(text)': \(known)" }
    }

    /// `prefix` followed by 0…600,000 milliseconds.
    static func milliseconds(_ text: String, prefix: String, known: String) throws -> Duration {
        guard text.hasPrefix(prefix), let value = Int(text.dropFirst(prefix.count)), (0...600_000).contains(value)
        else {
            throw Unknown(text: text, known: known)
        }
        return .milliseconds(value)
    }

    struct OutOfRange: Error, CustomStringConvertible {
        var description: String
    }

    /// A query lag asked for (`query_lag_seconds`), if any: 0 to 7 days.
    static func queryLag(_ seconds: Int?) throws -> TimeInterval? {
        guard let seconds else { return nil }
        guard (0...7 * 86400).contains(seconds) else {
            throw OutOfRange(description: "query_lag_seconds must be 0 to 604800")
        }
        return TimeInterval(seconds)
    }
}

/// A request target split into its path and decoded query parameters.
enum PathAndQuery {
    static func split(_ target: String) -> (path: String, query: [String: String]) {
        guard let mark = target.firstIndex(of: "?") else { return (target, [:]) }
        var query: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            query[String(parts[0])] = parts.count > 1 ? String(parts[1]).removingPercentEncoding : ""
        }
        return (String(target[..<mark]), query)
    }

    /// A non-negative page position (`revision`, `paginationToken`); absent is 0, anything else is nil.
    static func position(_ text: String?) -> Int? {
        guard let text else { return 0 }
        guard let value = Int(text), value >= 0 else { return nil }
        return value
    }
}

/// Credentials a simulator keeps between runs: a JSON object of strings in a file of mode 0600.
enum StoredCredentials {
    static func load(_ file: URL) -> [String: String]? {
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        return try? JSONDecoder().decode([String: String].self, from: data)
    }

    static func save(_ fields: [String: String], to file: URL) throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard
            FileManager.default.createFile(
                atPath: file.path, contents: try JSONEncoder().encode(fields), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
    }
}
