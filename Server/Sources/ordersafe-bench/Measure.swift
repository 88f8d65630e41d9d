import Foundation
import _CryptoExtras

/// Runs `body` repeatedly on the calling thread for about `seconds` and returns operations per second.
/// A short warm-up runs first; the best of three rounds is reported, so a busy neighbour skews it less.
func operationsPerSecond(seconds: Double = 1.0, _ body: () async throws -> Void) async rethrows -> Double {
    for _ in 0..<200 { try await body() }
    var best = 0.0
    for _ in 0..<3 {
        var count = 0
        let start = DispatchTime.now().uptimeNanoseconds
        var elapsed: UInt64 = 0
        while elapsed < UInt64(seconds * 1e9 / 3) {
            for _ in 0..<100 { try await body() }
            count += 100
            elapsed = DispatchTime.now().uptimeNanoseconds - start
        }
        best = max(best, Double(count) / (Double(elapsed) / 1e9))
    }
    return best
}

/// The value given after `flag` in a benchmark's arguments (`--database URL`), or nil when the flag is absent or last.
func flagValue(_ flag: String, in arguments: [String]) -> String? {
    arguments.firstIndex(of: flag).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
}

func report(_ name: String, _ value: Double, unit: String = "ops/s") {
    print(String(format: "%-52@ %12.0f %@", name as NSString, value, unit))
}

/// Raw RSA-2048 PKCS#1 v1.5 SHA-256 verifications per second of `length` bytes: the baseline a signed-message
/// benchmark is compared with.
func rawRSAVerifications(key: _RSA.Signing.PrivateKey, length: Int) async throws -> Double {
    let content = Data(repeating: UInt8(ascii: "a"), count: length)
    let signature = try key.signature(for: content, padding: .insecurePKCS1v1_5)
    let publicKey = key.publicKey
    return await operationsPerSecond {
        guard publicKey.isValidSignature(signature, for: content, padding: .insecurePKCS1v1_5) else {
            fatalError("baseline")
        }
    }
}

/// Prints a result beside its RSA baseline, the ratio, and whether it met `target`; returns whether it did.
func compare(_ title: String, operation: String, value: Double, raw: Double, target: Double) -> Bool {
    print("\(title) (one core, release build)")
    report("raw RSA-2048 PKCS#1 v1.5 SHA-256 verifications", raw)
    report(operation, value)
    print(String(format: "  ratio to raw RSA verify: %.2f", value / raw))
    print(String(format: "  target ≥ %.0f/s: %@", target, value >= target ? "met" : "NOT met"))
    return value >= target
}
