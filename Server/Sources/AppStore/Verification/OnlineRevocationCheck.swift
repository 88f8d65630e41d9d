import ChannelSupport
import Foundation
import Synchronization
@_spi(FixedExpiryValidationTime) import X509

/// Online revocation checking (OCSP, RFC 6960) of the leaf and intermediate, for data verified at the current
/// time: each certificate's responder (its Authority Information Access URI) is asked over HTTP POST.
///
/// A responder that answers `revoked`, or answers something that does not vouch for the certificate, makes the
/// chain `INVALID_CHAIN`; one that cannot be reached makes the verification `RETRYABLE_VERIFICATION_FAILURE`.
/// Verified chains are cached (``VerifiedChainCache``), so a revocation is seen within the cache's lifetime.
public struct OnlineRevocationCheck: Sendable {
    let transport: any ProviderTransport
    let timeout: Duration

    public init(transport: any ProviderTransport = HTTPClientProviderTransport(), timeout: Duration = .seconds(10)) {
        self.transport = transport
        self.timeout = timeout
    }

    /// Checks the chain's certificates with their responders at `validationTime`.
    func check(leaf: Certificate, intermediate: Certificate, roots: [Certificate], at validationTime: Date)
        async throws(VerificationError)
    {
        let requester = TransportOCSPRequester(transport: transport, timeout: timeout)
        // RFC 5280 again, because a chain is only built when some policy handles its critical extensions.
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: validationTime)
            OCSPVerifierPolicy(failureMode: .hard, requester: requester, fixedExpiryValidationTime: validationTime)
        }
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) {
        case .validCertificate:
            return
        case .couldNotValidate(let failures):
            let reason = failures.first.map { "\($0.policyFailureReason)" } ?? "no chain to a trusted root"
            if let unreachable = requester.unreachable {
                throw .retryableVerificationFailure("the OCSP responder could not be reached: \(unreachable)")
            }
            throw .invalidChain("OCSP: \(reason)")
        }
    }
}

/// Sends OCSP requests through a ``ProviderTransport`` and remembers whether a responder could not be reached
/// (network failure, timeout, a status other than 200), which is what makes a failed check retryable.
final class TransportOCSPRequester: OCSPRequester {
    let transport: any ProviderTransport
    let timeout: Duration
    private let failure = Mutex<String?>(nil)

    init(transport: any ProviderTransport, timeout: Duration) {
        self.transport = transport
        self.timeout = timeout
    }

    var unreachable: String? { failure.withLock { $0 } }

    func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
        let response: ProviderHTTPResponse
        do {
            response = try await transport.send(
                method: "POST", url: uri,
                headers: ["Content-Type": "application/ocsp-request", "Accept": "application/ocsp-response"],
                body: request,
                timeout: timeout)
        } catch {
            return record("\(uri): \(error)")
        }
        guard response.status == 200 else { return record("\(uri) answered HTTP \(response.status)") }
        return .response(response.body)
    }

    private func record(_ reason: String) -> OCSPRequesterQueryResult {
        failure.withLock { $0 = reason }
        return .terminalError(Unreachable(reason: reason))
    }

    struct Unreachable: Error, CustomStringConvertible {
        var reason: String
        var description: String { "OCSP responder unreachable: \(reason)" }
    }
}
