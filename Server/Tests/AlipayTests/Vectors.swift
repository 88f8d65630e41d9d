import Foundation
import Testing

/// The shared third-party vectors, read in place from `../shared/vectors` beside the repository.
enum Vectors {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/vectors")

    static let available: Bool = {
        let present = FileManager.default.fileExists(atPath: directory.appendingPathComponent("alipay").path)
        if !present {
            print(
                "⚠️  ../shared/vectors is missing: the Alipay vector tests are SKIPPED. Clone beside shared/ to run them."
            )
        }
        return present
    }()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(path), encoding: .utf8)
    }

    static func json(_ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent(path)))
            as! [String: Any]
    }
}
