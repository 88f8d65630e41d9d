import AppStore
import ArgumentParser
import Foundation
import OrderSafeModel
import X509

/// `ordersafe appstore …`: offline tools for App Store signed data and receipts (DESIGN.md's stable interface).
struct AppStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appstore", abstract: "Verify App Store signed data offline.",
        subcommands: [AppStoreVerifyCommand.self, AppStoreReceiptCommand.self])
}

struct AppStoreReceiptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt",
        abstract: "Parse an App Store receipt (base64 text or DER) and, with --root, validate its signature and chain.",
        discussion:
            "Prints {\"result\":\"valid|invalid|unchecked\",\"error\":…,\"receipt\":{…}} with verifyReceipt's field names. "
            + "Exit 0 if valid or unchecked, 1 if invalid or unreadable, 2 on usage errors.")

    @Argument(help: "The receipt file.")
    var file: String

    @Option(
        name: .customLong("root"),
        help: "A trusted root (DER or PEM; repeatable): Apple Inc. Root, or Xcode's StoreKit certificate.")
    var roots: [String] = []

    func run() async throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ValidationError("cannot read \(file)")
        }
        var line: [String: Any] = [:]
        do {
            let der = try ReceiptParser.bytes(Array(data))
            if roots.isEmpty {
                line = ["result": "unchecked", "receipt": try ReceiptParser.parse(der).json]
            } else {
                let certificates: [Certificate]
                do {
                    certificates = try AppleRootCertificates.read(paths: roots, requireApple: false)
                } catch {
                    throw ValidationError(error.description)
                }
                switch try await ReceiptValidator(rootCertificates: certificates).validate(der) {
                case .valid(let receipt): line = ["result": "valid", "receipt": receipt.json]
                case .invalid(let reason):
                    line = ["result": "invalid", "error": reason, "receipt": try ReceiptParser.parse(der).json]
                }
            }
        } catch let error as ReceiptParser.Error {
            line = ["result": "invalid", "error": error.description]
        }
        let json = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: json, as: UTF8.self))
        if line["result"] as? String == "invalid" { throw ExitCode(1) }
    }
}
