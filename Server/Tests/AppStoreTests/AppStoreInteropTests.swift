import Foundation
import OracleSupport
import Sandbox
import Testing

@testable import AppStore

enum AppStoreOracle {
    static let apple = Oracle(name: "appstore", script: "appstore_oracle.py")
}

/// Apple's own Python library and ours, on the same inputs, must agree on valid or invalid (error names may
/// differ where the libraries themselves differ: see EXPECTED-apple-library.md).
@Suite(
    "App Store interoperability with Apple's app-store-server-library", .enabled(if: AppStoreOracle.apple.isAvailable))
struct AppStoreInteropTests {
    struct Case {
        var kind: String
        var jws: String
        var roots: [[UInt8]]
        var environment: AppStoreEnvironment
        var bundleID: String
        var appAppleID: Int64?
        /// Apple's test chain lacks authority key identifiers: Apple's own tests relax OpenSSL's strict mode for it.
        var strict = true
    }

    func ours(_ c: Case) async -> String {
        do {
            let verifier = SignedDataVerifier(
                rootCertificates: try AppleRootCertificates.load(c.roots, requireApple: false), bundleID: c.bundleID,
                appAppleID: c.appAppleID, environment: c.environment)
            switch c.kind {
            case "transaction": _ = try await verifier.verifyTransaction(c.jws)
            case "renewalInfo": _ = try await verifier.verifyRenewalInfo(c.jws)
            case "appTransaction": _ = try await verifier.verifyAppTransaction(c.jws)
            default: _ = try await verifier.verifyNotification(c.jws)
            }
            return "VALID"
        } catch {
            return error.name
        }
    }

    @Test("the shared vectors and sandbox-signed data: the same verdicts")
    func agree() async throws {
        var cases: [Case] = []
        if Vectors.available {
            let testRoot = try Vectors.der("certs/testCA.der")
            for (file, kind) in [
                ("testNotification", "notification"), ("wrongBundleId", "notification"),
                ("transactionInfo", "transaction"), ("renewalInfo", "renewalInfo"),
            ] {
                for environment in [AppStoreEnvironment.sandbox, .production] {
                    cases.append(
                        Case(
                            kind: kind, jws: try Vectors.text("mock_signed_data/\(file)"), roots: [testRoot],
                            environment: environment, bundleID: "com.example", appAppleID: 1234, strict: false))
                }
            }
            cases.append(
                Case(
                    kind: "renewalInfo",
                    jws: try Vectors.text("real_apple_jws/go-iap_sandbox_renewalInfo_2000000335310644.jws"),
                    roots: [try Vectors.der("chain_test_certs/REAL_APPLE_ROOT.der")], environment: .sandbox,
                    bundleID: "com.example", appAppleID: nil))
            cases.append(
                Case(
                    kind: "renewalInfo",
                    jws: try Vectors.text("real_apple_jws/go-iap_sandbox_renewalInfo_2000000335310644.jws"),
                    roots: [testRoot], environment: .sandbox, bundleID: "com.example", appAppleID: nil))
            for (file, kind) in [
                ("xcode-signed-transaction", "transaction"), ("xcode-signed-renewal-info", "renewalInfo"),
                ("xcode-signed-app-transaction", "appTransaction"),
            ] {
                for environment in [AppStoreEnvironment.xcode, .sandbox] {
                    cases.append(
                        Case(
                            kind: kind, jws: try Vectors.text("xcode/\(file)"), roots: [testRoot],
                            environment: environment,
                            bundleID: Vectors.xcodeBundle, appAppleID: nil))
                }
            }
        }
        let authority = try SandboxAppStoreCA(now: Date(timeIntervalSince1970: 1_795_000_000))
        let signed = try authority.sign(AppStoreNegativeTests.transaction)
        let impostor = try SandboxAppStoreCA(now: Date(timeIntervalSince1970: 1_795_000_000)).sign(
            AppStoreNegativeTests.transaction)
        var tampered = Array(signed)
        tampered[tampered.count - 3] = tampered[tampered.count - 3] == "A" ? "B" : "A"
        cases += [
            Case(
                kind: "transaction", jws: signed, roots: [authority.rootDER], environment: .sandbox,
                bundleID: "com.example.app"),
            Case(
                kind: "transaction", jws: signed, roots: [authority.rootDER], environment: .sandbox,
                bundleID: "com.other"),
            Case(
                kind: "transaction", jws: signed, roots: [authority.rootDER], environment: .production,
                bundleID: "com.example.app",
                appAppleID: 1234),
            Case(
                kind: "transaction", jws: impostor, roots: [authority.rootDER], environment: .sandbox,
                bundleID: "com.example.app"),
            Case(
                kind: "transaction", jws: String(tampered), roots: [authority.rootDER], environment: .sandbox,
                bundleID: "com.example.app"),
        ]

        let theirs = try await AppStoreOracle.apple.run(
            cases.map { c in
                [
                    "op": "verify", "kind": c.kind, "jws": c.jws,
                    "roots": c.roots.map { Data($0).base64EncodedString() },
                    "environment": c.environment.rawValue, "bundle_id": c.bundleID,
                    "app_apple_id": c.appAppleID.map { $0 as Any } ?? NSNull(),
                    "strict": c.strict,
                ]
            })
        var valid = 0
        for (c, verdict) in zip(cases, theirs) {
            let mine = await ours(c)
            let apple = verdict as! String
            #expect(
                (mine == "VALID") == (apple == "VALID"), "\(c.kind) \(c.environment): ours \(mine), Apple's \(apple)")
            if mine == "VALID" { valid += 1 }
        }
        #expect(valid >= 6, "the comparison must include valid data too")
    }
}
