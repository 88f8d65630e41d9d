import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerTestSupport
import Logging
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// Checks the server against `openapi.json`: the same routes, and responses that match the documented schemas.
@Suite("OpenAPI contract")
struct OpenAPIContractTests {
    /// Read from the source tree, so the test checks the document as committed.
    static var document: [String: Any] {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/OrderSafeServer/Resources/openapi.json")
        return try! JSONSerialization.jsonObject(with: Data(contentsOf: source)) as! [String: Any]
    }

    static var documentedOperations: Set<String> {
        let paths = document["paths"] as! [String: [String: Any]]
        return Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
    }

    /// The console's pages (`/admin/…`, and `/`, which leads there) are HTML for people; the data behind them is the
    /// documented `/v1/admin/…`.
    static func isConsole(_ route: String) -> Bool {
        let path = route.split(separator: " ").last.map(String.init) ?? ""
        return path == "/" || path == "/admin" || path.hasPrefix("/admin/")
    }

    @Test("every route is documented and every documented operation is routed")
    func routesMatchDocument() async throws {
        let (router, components) = try await OrderSafeApplication.makeRouter(
            settings: try await TestServer.settings(), clock: FixedClock(date: TestServer.now), random: { 7 },
            logger: TestLog.logger)
        try await components.database.shutdown()
        let routed = Set(
            router.routes.map { route in
                let path = route.path.components.map { component in
                    let text = "\(component)"
                    return text.hasPrefix(":") ? "{\(text.dropFirst())}" : text
                }.joined(separator: "/")
                return "\(route.method.rawValue) /\(path)"
            })
        #expect(routed.filter { !Self.isConsole($0) } == Self.documentedOperations)
        #expect(routed.contains("GET /admin/orders/{order_no}"))
    }

    @Test(
        "every operation documents the 429 every route can answer, the sandbox's included (the per-address limit is before routing)"
    )
    func everyOperationDocumentsRateLimits() {
        let paths = Self.document["paths"] as! [String: [String: Any]]
        let missing = paths.flatMap { path, operations in
            operations.compactMap { method, operation -> String? in
                guard let responses = (operation as? [String: Any])?["responses"] as? [String: Any] else { return nil }
                return responses["429"] == nil ? "\(method.uppercased()) \(path)" : nil
            }
        }
        #expect(missing.isEmpty, "without 429: \(missing.sorted())")
    }

    @Test("responses match the documented schemas")
    func responsesMatchSchemas() async throws {
        let alice = try await TestServer.token("alice")
        try await TestServer.run { client in
            let created = try await TestServer.createOrder(client, token: alice)
            let orderNo = try created.decoded(OrderResponse.self).order.orderNo
            let cases: [(String, HTTPRequest.Method, HTTPFields, String, TestResponse)] = [
                ("/v1/orders", .post, [:], "201", created),
                ("/v1/catalog", .get, [:], "200", try await client.execute(uri: "/v1/catalog", method: .get)),
                (
                    "/v1/orders/{order_no}", .get, [:], "200",
                    try await client.execute(
                        uri: "/v1/orders/\(orderNo)", method: .get, headers: TestServer.bearer(alice))
                ),
                (
                    "/v1/orders/{order_no}", .get, [:], "404",
                    try await client.execute(uri: "/v1/orders/OS-NONE", method: .get, headers: TestServer.bearer(alice))
                ),
                (
                    "/v1/me/entitlements", .get, [:], "200",
                    try await client.execute(
                        uri: "/v1/me/entitlements", method: .get, headers: TestServer.bearer(alice))
                ),
                (
                    "/v1/me/entitlements", .get, [:], "401",
                    try await client.execute(uri: "/v1/me/entitlements", method: .get)
                ),
                (
                    "/v1/admin/orders/{order_no}", .get, [:], "200",
                    try await client.execute(
                        uri: "/v1/admin/orders/\(orderNo)", method: .get,
                        headers: TestServer.bearer(TestServer.adminKey))
                ),
                ("/healthz", .get, [:], "200", try await client.execute(uri: "/healthz", method: .get)),
                ("/readyz", .get, [:], "200", try await client.execute(uri: "/readyz", method: .get)),
            ]
            for (path, method, _, status, response) in cases {
                #expect("\(response.status.code)" == status, "\(method) \(path)")
                let schema = try Self.responseSchema(path: path, method: method, status: status)
                let value = try JSONDecoder().decode(JSONValue.self, from: Data(buffer: response.body))
                let problems = SchemaValidator(document: Self.document).problems(value, against: schema, at: "$")
                #expect(problems.isEmpty, "\(method) \(path) \(status): \(problems)")
            }
        }
    }

    @Test("the validator itself catches a wrong body")
    func validatorCatchesErrors() throws {
        let schema = try Self.responseSchema(path: "/v1/orders", method: .post, status: "201")
        let wrong = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"order":{"order_no":5,"extra":true}}"#.utf8))
        let problems = SchemaValidator(document: Self.document).problems(wrong, against: schema, at: "$")
        #expect(problems.contains { $0.contains("order_no") })
        #expect(problems.contains { $0.contains("extra") })
        #expect(problems.contains { $0.contains("order_uuid") })
    }

    static func responseSchema(path: String, method: HTTPRequest.Method, status: String) throws -> [String: Any] {
        let paths = document["paths"] as! [String: [String: Any]]
        let operation = try #require(paths[path]?[method.rawValue.lowercased()] as? [String: Any], "\(method) \(path)")
        let responses = try #require(operation["responses"] as? [String: Any])
        var response = try #require(responses[status] as? [String: Any], "\(method) \(path) documents no \(status)")
        if let reference = response["$ref"] as? String, let name = reference.split(separator: "/").last {
            let shared = (document["components"] as? [String: Any])?["responses"] as? [String: Any]
            response = try #require(shared?[String(name)] as? [String: Any], "\(reference)")
        }
        let content = try #require(response["content"] as? [String: Any])
        let media = try #require(content["application/json"] as? [String: Any])
        return try #require(media["schema"] as? [String: Any])
    }
}

/// A JSON value that keeps booleans, integers and other numbers apart (JSONSerialization on Linux does not).
enum JSONValue: Decodable {
    case null
    case bool(Bool)
    case int(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}

/// The subset of JSON Schema the OpenAPI document uses: $ref, type, required, properties, additionalProperties,
/// items, enum, pattern.
struct SchemaValidator {
    let document: [String: Any]

    func problems(_ value: JSONValue, against schema: [String: Any], at path: String) -> [String] {
        if let ref = schema["$ref"] as? String {
            let name = String(ref.split(separator: "/").last!)
            let schemas = (document["components"] as! [String: Any])["schemas"] as! [String: Any]
            return problems(value, against: schemas[name] as! [String: Any], at: path)
        }
        var found: [String] = []
        switch (schema["type"] as? String, value) {
        case ("object", .object(let object)):
            for key in schema["required"] as? [String] ?? [] where object[key] == nil {
                found.append("\(path).\(key): required but missing")
            }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for (key, child) in object {
                if let childSchema = properties[key] as? [String: Any] {
                    found += problems(child, against: childSchema, at: "\(path).\(key)")
                } else if let additional = schema["additionalProperties"] as? [String: Any] {
                    found += problems(child, against: additional, at: "\(path).\(key)")
                } else if schema["additionalProperties"] as? Bool == false {
                    found.append("\(path).\(key): not in the schema")
                }
            }
        case ("array", .array(let array)):
            if let items = schema["items"] as? [String: Any] {
                for (index, item) in array.enumerated() {
                    found += problems(item, against: items, at: "\(path)[\(index)]")
                }
            }
        case ("string", .string(let string)):
            if let pattern = schema["pattern"] as? String, string.range(of: pattern, options: .regularExpression) == nil
            {
                found.append("\(path): '\(string)' does not match \(pattern)")
            }
            if let allowed = schema["enum"] as? [String], !allowed.contains(string) {
                found.append("\(path): '\(string)' is not one of \(allowed)")
            }
        case ("integer", .int), ("boolean", .bool), (nil, _):
            break
        case (let type?, _):
            found.append("\(path): expected \(type), found \(value)")
        }
        return found
    }
}
