import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// The console's templates and static files, bundled with the server (no frontend build): rendering a page, and
/// serving the stylesheet and script with long-lived cache headers under a content-derived version.
struct ConsoleViews: Sendable {
    let library: MustacheLibrary
    let assets: [String: (body: ByteBuffer, contentType: String)]
    /// The first 12 hex digits of the assets' SHA-256: pages link `?v=<version>`, so a new build is fetched at once.
    let assetVersion: String

    static let templates = [
        "layout", "sign_in", "overview", "order_rows", "orders", "order", "refund", "user", "subscription",
        "statements",
        "statement", "offers",
        "operations", "error",
    ]

    /// Loads the bundled templates and assets; throws naming what is missing from the build.
    init() throws {
        var library = MustacheLibrary()
        for name in Self.templates {
            let text = String(decoding: try Self.resource(name, ext: "mustache"), as: UTF8.self)
            try library.register(text, named: name)
        }
        self.library = library
        var assets: [String: (body: ByteBuffer, contentType: String)] = [:]
        var hash = SHA256()
        for (file, type) in [
            ("console.css", "text/css; charset=utf-8"), ("console.js", "text/javascript; charset=utf-8"),
        ] {
            let parts = file.split(separator: ".")
            let data = try Self.resource(String(parts[0]), ext: String(parts[1]))
            hash.update(data: data)
            assets[file] = (ByteBuffer(bytes: data), type)
        }
        self.assets = assets
        assetVersion = String(hash.finalize().map { String(format: "%02x", $0) }.joined().prefix(12))
    }

    private static func resource(_ name: String, ext: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: ext, subdirectory: "console"),
            let data = try? Data(contentsOf: url)
        else { throw ConsoleSetupError(missing: "console/\(name).\(ext)") }
        return data
    }

    /// Renders `template` with `values` as an HTML page with the console's security headers.
    func page(_ template: String, _ values: [String: Any], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:])
        -> Response
    {
        let html = library.render(values, withTemplate: template) ?? "template \(template) is missing"
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        Self.secure(&fields)
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The console's response headers: nothing cached, nothing framed, scripts and styles from this origin only.
    static func secure(_ fields: inout HTTPFields) {
        fields[.cacheControl] = "no-store"
        fields[.contentSecurityPolicy] =
            "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        fields[.xContentTypeOptions] = "nosniff"
        fields[Self.referrerPolicy] = "same-origin"
    }

    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    /// A static asset: cached for a year when the link names this build's version, five minutes otherwise.
    func asset(_ name: String, version: String?) -> Response? {
        guard let asset = assets[name] else { return nil }
        let cache = version == assetVersion ? "public, max-age=31536000, immutable" : "public, max-age=300"
        return Response(
            status: .ok,
            headers: [
                .contentType: asset.contentType, .cacheControl: cache, .eTag: "\"\(assetVersion)\"",
                .xContentTypeOptions: "nosniff",
            ],
            body: .init(byteBuffer: asset.body))
    }

    /// A 303 to a path of this console.
    static func redirect(_ location: String, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.location] = location
        secure(&fields)
        return Response(status: .seeOther, headers: fields)
    }
}

/// The build lacks a file the console needs.
struct ConsoleSetupError: Error, CustomStringConvertible {
    var missing: String
    var description: String { "the bundled \(missing) is missing from this build" }
}
