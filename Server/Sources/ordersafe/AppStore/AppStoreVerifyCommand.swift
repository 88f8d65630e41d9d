import AppStore
import ArgumentParser
import ChannelSupport
import Foundation

struct AppStoreVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract:
            "Verify StoreKit 2 JWS files (transactions, renewal info, notifications with their nested JWS, app transactions).",
        discussion: "Prints one JSON object per file. Exit 0 if all are valid, 1 if any is invalid, 2 on usage errors.")

    /// The value options (each takes the next argument) and the flags, for ``setAside(_:)``.
    static let valueOptions: Set<String> = ["--root", "--bundle-id", "--app-apple-id", "--environment", "--at"]
    static let flags: Set<String> = ["--online", "--help", "-h"]

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
        var output = LineOutput()
        for input in inputs() {
            do {
                let (kind, payload) = try await verifier.verifyAny(try input.text())
                let object: JSONObject
                do {
                    object = try JSONObject(payload)
                } catch {
                    throw VerificationError.invalidJWTFormat("the payload is not a JSON object (\(error))")
                }
                // The members in byte order of their names, as each line has always listed them.
                output.write(
                    #"{"file":"#, JSONString.encode(input.name), #","kind":""#, kind.rawValue, #"","payload":"#)
                output.write(object.sortedText)
                output.write(#","result":"valid"}"#, "\n")
            } catch let error as VerificationError {
                allValid = false
                output.write(#"{"detail":"#, JSONString.encode(error.description), #","error":""#, error.name)
                output.write(#"","file":"#, JSONString.encode(input.name), #","result":"invalid"}"#, "\n")
            }
        }
        output.flush()
        if !allValid { throw ExitCode(1) }
    }

    /// One thing to verify: a file, or a JWS given on standard input.
    struct Input {
        var name: String
        var inline: String?

        /// The JWS, surrounding white space taken off; a compact JWS is ASCII, so anything else is refused here.
        func text() throws(VerificationError) -> String {
            if let inline { return inline }
            guard let data = FileManager.default.contents(atPath: name) else {
                throw .invalidJWTFormat("cannot read \(name)")
            }
            let bytes = ASCIIWhitespace.trimmed([UInt8](data)[...])
            guard bytes.allSatisfy({ $0 < 0x80 }) else {
                throw .invalidJWTFormat("\(name) is not a compact JWS (it holds non-ASCII bytes)")
            }
            return String(decoding: bytes, as: UTF8.self)
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
                let bytes = ASCIIWhitespace.trimmed(Array(raw.utf8)[...])
                guard !bytes.isEmpty else { continue }
                let line = String(decoding: bytes, as: UTF8.self)
                let isJWS =
                    bytes.count(where: { $0 == UInt8(ascii: ".") }) == 2 && bytes.allSatisfy(JWSText.isJWSByte)
                inputs.append(isJWS ? Input(name: "-:\(number)", inline: line) : Input(name: line))
            }
            return inputs
        }
    }
}

extension AppStoreVerifyCommand {
    /// `appstore verify`'s arguments with its file operands after the first set aside, and those operands: the
    /// caller parses the rest and appends them to ``files``. ArgumentParser copies a repeated argument's array, and
    /// the set of its inputs, once per value (`ParsedValues.update`): 10,000 file names took three seconds before the
    /// first was read. Arguments of any other command, with a `--` terminator, or with an option it does not know
    /// (ArgumentParser then says what is wrong) are returned as they are.
    static func setAside(_ arguments: [String]) -> (arguments: [String], files: [String]) {
        guard arguments.count > 3, arguments[0] == "appstore", arguments[1] == "verify", !arguments.contains("--")
        else { return (arguments, []) }
        var kept = Array(arguments[..<2])
        var files: [String] = []
        var operands = 0
        var index = 2
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument.hasPrefix("-") && argument != "-" {
                let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
                guard valueOptions.contains(name) || flags.contains(argument) else { return (arguments, []) }
                kept.append(argument)
                if valueOptions.contains(argument), index < arguments.count {
                    kept.append(arguments[index])
                    index += 1
                }
            } else {
                operands += 1
                if operands == 1 { kept.append(argument) } else { files.append(argument) }
            }
        }
        return (kept, files)
    }
}

/// Lines for standard output, written in blocks rather than a `print` each.
struct LineOutput {
    private var buffer: [UInt8] = []

    mutating func write(_ parts: String...) {
        for part in parts { buffer.append(contentsOf: part.utf8) }
        if buffer.count >= 1 << 16 { flush() }
    }

    mutating func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    mutating func flush() {
        FileHandle.standardOutput.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}

/// The bytes a compact JWS is made of.
enum JWSText {
    /// A byte of a compact JWS: base64url's alphabet, `.` between segments, `=` (padding some signers leave).
    static func isJWSByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: "="):
            true
        default: false
        }
    }
}
