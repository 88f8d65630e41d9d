import AppStore

/// Verifies App Store signed data as Apple asks servers to: with the verifier of the configured environment first
/// and, on a Production server, Sandbox data (App Review's purchases, TestFlight) with a second verifier, so a
/// review purchase is not refused. What it accepts keeps its `environment`, which marks the order as sandbox.
public struct AppStoreVerifier: Sendable {
    let primary: SignedDataVerifier
    let sandbox: SignedDataVerifier?

    /// `sandbox` is consulted only when `primary` answers `INVALID_ENVIRONMENT`.
    public init(primary: SignedDataVerifier, sandbox: SignedDataVerifier? = nil) {
        self.primary = primary
        self.sandbox = sandbox
    }

    public var bundleID: String? { primary.bundleID }

    public func verifyTransaction(_ jws: String) async throws(VerificationError) -> JWSTransaction {
        try await firstAccepting { verifier throws(VerificationError) in try await verifier.verifyTransaction(jws) }
    }

    public func verifyAppTransaction(_ jws: String) async throws(VerificationError) -> AppTransaction {
        try await firstAccepting { verifier throws(VerificationError) in try await verifier.verifyAppTransaction(jws) }
    }

    public func verifyNotification(_ jws: String) async throws(VerificationError) -> AppStoreNotification {
        try await firstAccepting { verifier throws(VerificationError) in try await verifier.verifyNotification(jws) }
    }

    /// Whether a JWS that failed with `INVALID_CHAIN` is signed up to one of Apple's roots or a configured one
    /// (``SignedDataVerifier/chainAnchorsInKnownRoot(_:)``).
    public func chainAnchorsInKnownRoot(_ jws: String) -> Bool {
        primary.chainAnchorsInKnownRoot(jws) || sandbox?.chainAnchorsInKnownRoot(jws) == true
    }

    /// `verify` with the primary verifier, then, if that refused the environment alone, with the sandbox one.
    private func firstAccepting<T>(_ verify: (SignedDataVerifier) async throws(VerificationError) -> T)
        async throws(VerificationError) -> T
    {
        do {
            return try await verify(primary)
        } catch .invalidEnvironment(let detail) {
            guard let sandbox else { throw .invalidEnvironment(detail) }
            return try await verify(sandbox)
        } catch {
            throw error
        }
    }
}
