import Foundation

/// The API contract as this server serves it: the bundled document less the paths it does not mount (the simulators
/// in production, the routes of channels without an account), so `/openapi.json` describes what answers.
enum OpenAPIDocument {
    /// `document` without the paths that start with one of `unmounted`; unchanged when nothing is left out.
    static func mounted(_ document: Data, unmounted: [String]) throws -> Data {
        guard var object = try JSONSerialization.jsonObject(with: document) as? [String: Any],
            let paths = object["paths"] as? [String: Any]
        else { return document }
        let kept = paths.filter { path, _ in !unmounted.contains { path.hasPrefix($0) } }
        guard kept.count < paths.count else { return document }
        object["paths"] = kept
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    }
}
