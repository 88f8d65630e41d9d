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

struct AppStoreVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract:
            "Verify StoreKit 2 JWS files (transactions, renewal info, notifications with their nested JWS, app transactions).",
        discussion: "Prints one JSON object per file. Exit 0 if all are valid, 1 if any is invalid, 2 on usage errors.")

    @Argument(
        help:
            "JWS files (compact serialisation; surrounding white space is ignored). '-' reads standard input: one file path or one JWS per line (thousands of files without a long command line)."
    )
    var files: [String]

    @Option(
        name: .customLong("root"),
        help:
            "A trusted root certificate, DER or PEM (repeatable). Required unless the environment is Xcode or LocalTesting."
    )
    var roots: [String] = []

    @Option(name: .customLong("bundle-id"), help: "The app's bundle id; not checked when omitted.")
    var bundleID: String?

    @Option(name: .customLong("app-apple-id"), help: "The app's Apple id (checked in Production).")
    var appAppleID: Int64?

    @Option(help: "Production, Sandbox, Xcode or LocalTesting.")
    var environment: String = "Production"

    @Option(help: "Validation time: signed (the payload's signedDate; the default), now, or UNIX seconds.")
    var at: String?

    @Flag(help: "Ask the certificates' OCSP responders whether they are revoked (validates at now; needs the network).")
    var online = false

    func validate() throws {
        guard AppStoreEnvironment(rawValue: environment) != nil else {
            throw ValidationError("--environment must be Production, Sandbox, Xcode or LocalTesting")
        }
        if let at, !["signed", "now"].contains(at), Int64(at) == nil {
            throw ValidationError("--at must be signed, now or UNIX seconds")
        }
        if online, let at, at != "now" {
            throw ValidationError("--online validates at now; it cannot be combined with --at \(at)")
        }
        guard !roots.isEmpty || AppStoreEnvironment(rawValue: environment)!.isLocal else {
            throw ValidationError("--root is required (Apple Root CA - G3 for App Store data)")
        }
    }

    var validationTime: SignedDataVerifier.ValidationTime {
        switch at ?? "signed" {
        case "signed": .signed
        case "now": .now
        case let seconds: .fixed(Date(timeIntervalSince1970: Double(Int64(seconds)!)))
        }
    }

    func run() async throws {
        let environment = AppStoreEnvironment(rawValue: self.environment)!
        let verifier: SignedDataVerifier
        do {
            verifier = SignedDataVerifier(
                rootCertificates: try AppleRootCertificates.read(
                    paths: roots, requireApple: environment == .production),
                bundleID: bundleID, appAppleID: appAppleID, environment: environment, validationTime: validationTime,
                onlineChecks: online ? OnlineRevocationCheck() : nil)
        } catch {
            throw ValidationError(error.description)
        }
        var allValid = true
        for input in inputs() {
            var line: [String: Any] = ["file": input.name]
            do {
                let text = try input.text()
                let (kind, payload) = try await verifier.verifyAny(text.trimmingCharacters(in: .whitespacesAndNewlines))
                line["result"] = "valid"
                line["kind"] = kind.rawValue
                line["payload"] = try JSONSerialization.jsonObject(with: Data(payload))
            } catch let error as VerificationError {
                allValid = false
                line["result"] = "invalid"
                line["error"] = error.name
                line["detail"] = error.description
            }
            let json = try JSONSerialization.data(
                withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: json, as: UTF8.self))
        }
        if !allValid { throw ExitCode(1) }
    }

    /// One thing to verify: a file, or a JWS given on standard input.
    struct Input {
        var name: String
        var inline: String?

        func text() throws(VerificationError) -> String {
            if let inline { return inline }
            guard let data = FileManager.default.contents(atPath: name), let text = String(data: data, encoding: .utf8)
            else {
                throw .invalidJWTFormat("cannot read \(name) as text")
            }
            return text
        }
    }

    /// The arguments, with `-` replaced by standard input's lines: a line that is a compact JWS (three base64url
    /// segments) is verified as given and named `-:LINE`; any other non-empty line is a file path.
    func inputs() -> [Input] {
        files.flatMap { file -> [Input] in
            guard file == "-" else { return [Input(name: file)] }
            var inputs: [Input] = []
            var number = 0
            while let raw = readLine(strippingNewline: true) {
                number += 1
                let line = raw.trimmingCharacters(in: .whitespaces)
                guard !line.isEmpty else { continue }
                let segments = line.split(separator: ".", omittingEmptySubsequences: false)
                let isJWS =
                    segments.count == 3
                    && line.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.=".contains($0)) }
                inputs.append(isJWS ? Input(name: "-:\(number)", inline: line) : Input(name: line))
            }
            return inputs
        }
    }
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
