import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// A browser's part in the console tests: a cookie jar, the CSRF token of the last page, forms posted as a browser
/// posts them.
final class ConsoleClient: @unchecked Sendable {
    let client: any TestClientProtocol
    private(set) var cookies: [String: String] = [:]
    private(set) var csrf: String?
    var acceptLanguage: String?

    init(_ client: any TestClientProtocol) {
        self.client = client
    }

    /// Fetches a page, keeping its cookies and CSRF token; returns status, body and the `Location` of a redirect.
    @discardableResult
    func get(_ uri: String) async throws -> (status: HTTPResponse.Status, html: String, location: String?) {
        try await send(uri, method: .get, body: nil)
    }

    /// Posts a form with the page's CSRF token (unless `csrf` says otherwise: nil leaves it out).
    @discardableResult
    func post(_ uri: String, _ fields: [String: String] = [:], csrf: String?? = .none) async throws
        -> (status: HTTPResponse.Status, html: String, location: String?)
    {
        var fields = fields
        switch csrf {
        case .none: fields["csrf"] = self.csrf
        case .some(let value): fields["csrf"] = value
        }
        let allowed = CharacterSet.alphanumerics.union(.init(charactersIn: "-._~"))
        let body = fields.sorted { $0.key < $1.key }.compactMap { key, value in
            "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
        return try await send(uri, method: .post, body: body)
    }

    private func send(_ uri: String, method: HTTPRequest.Method, body: String?) async throws
        -> (status: HTTPResponse.Status, html: String, location: String?)
    {
        var headers = HTTPFields()
        if !cookies.isEmpty {
            headers[.cookie] = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                separator: "; ")
        }
        if let acceptLanguage { headers[.acceptLanguage] = acceptLanguage }
        if body != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
        let response = try await client.execute(
            uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        for header in response.headers[values: .setCookie] {
            let pair = header.split(separator: ";").first ?? ""
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            let name = String(parts[0]).trimmingCharacters(in: .whitespaces)
            if parts[1].isEmpty || header.lowercased().contains("max-age=0") {
                cookies[name] = nil
            } else {
                cookies[name] = String(parts[1])
            }
        }
        let html = String(buffer: response.body)
        if let token = Self.firstMatch(#"name="csrf" value="([^"]+)""#, in: html) { csrf = token }
        return (response.status, html, response.headers[.location])
    }

    /// Signs in with `key` from a fresh sign-in page; returns the answer to the form.
    @discardableResult
    func signIn(_ key: String) async throws -> (status: HTTPResponse.Status, html: String, location: String?) {
        try await get("/admin/sign-in")
        return try await post("/admin/sign-in", ["key": key])
    }

    /// Forgets one cookie, as a browser that never had it.
    func drop(_ name: String) { cookies[name] = nil }

    func set(_ name: String, _ value: String) { cookies[name] = value }

    static func firstMatch(_ pattern: String, in text: String) -> String? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
            let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
            match.numberOfRanges > 1,
            let range = Range(match.range(at: 1), in: text)
        else { return nil }
        return String(text[range])
    }

    static func allMatches(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}
