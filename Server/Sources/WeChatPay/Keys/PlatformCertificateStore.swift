import ChannelSupport
import Foundation
import Logging
import OrderSafeModel
import X509

/// WeChat Pay's platform certificates in certificate mode: downloaded from `GET /v3/certificates`, decrypted with
/// the APIv3 key, kept by serial (several at once while WeChat Pay rotates them), refreshed before the newest one
/// expires, every 12 hours, and at once when a message names a serial we do not hold.
public actor PlatformCertificateStore: WeChatPayKeyProvider {
    /// One downloaded certificate.
    public struct Entry: Sendable, Hashable {
        public var serial: String
        public var expiresAt: Date
    }

    let requester: WeChatPayRequester
    let cipher: APIv3Cipher
    let clock: any WallClock
    /// Refresh at least this often (WeChat Pay recommends 12 hours).
    let refreshInterval: TimeInterval
    /// An unknown serial triggers a download at most this often, so a forged serial cannot make us hammer the API.
    let unknownSerialCooldown: TimeInterval

    private var keys = WeChatPayVerificationKeys()
    public private(set) var entries: [Entry] = []
    private var lastRefresh: Date?
    private var lastUnknownSerialRefresh: Date?

    public init(
        merchant: MerchantSigner, cipher: APIv3Cipher, baseURL: String = WeChatPayClient.productionBaseURL,
        transport: any ProviderTransport = HTTPClientProviderTransport(), retry: RetryPolicy = RetryPolicy(),
        clock: any WallClock = SystemClock(), nonce: @escaping @Sendable () -> String = WeChatPayNonce.random,
        refreshInterval: TimeInterval = 12 * 3600, unknownSerialCooldown: TimeInterval = 60,
        logger: Logger = Logger(label: "ordersafe.wechatpay")
    ) {
        requester = WeChatPayRequester(
            merchant: merchant, baseURL: baseURL, transport: transport, retry: retry, clock: clock, nonce: nonce,
            sleep: { try await Task.sleep(for: $0) }, logger: logger)
        self.cipher = cipher
        self.clock = clock
        self.refreshInterval = refreshInterval
        self.unknownSerialCooldown = unknownSerialCooldown
    }

    public func verificationKeys(for serial: String) async throws(WeChatPayError) -> WeChatPayVerificationKeys {
        let now = clock.now()
        let due = lastRefresh.map { now.timeIntervalSince($0) >= refreshInterval } ?? true
        let expiring = entries.map(\.expiresAt).max().map { $0.timeIntervalSince(now) < refreshInterval } ?? true
        let unknown = !keys.contains(serial: serial)
        let unknownAllowed = lastUnknownSerialRefresh.map { now.timeIntervalSince($0) >= unknownSerialCooldown } ?? true
        if due || expiring || (unknown && unknownAllowed) {
            if unknown { lastUnknownSerialRefresh = now }
            do {
                try await refresh()
            } catch {
                // Keep verifying with what we hold; a message signed by a key we hold still verifies.
                if keys.isEmpty { throw .unreadableCertificate("cannot download platform certificates: \(error)") }
            }
        }
        return keys
    }

    /// Downloads the current certificates now. The answer is verified with the certificates it carries (each
    /// decrypted with our APIv3 key, which only WeChat Pay and we know) together with those we already hold.
    public func refresh() async throws {
        let response = try await requester.send("GET", "/v3/certificates")
        let downloaded = try Self.decode(
            response.body, cipher: cipher, merchantSerial: requester.merchant.certificateSerial)
        var candidate = keys
        for certificate in downloaded { try candidate.addCertificate(pem: certificate.pem, serial: certificate.serial) }
        do {
            try await SignedMessageVerifier(keys: candidate, clock: clock).verify(
                headers: response.headers, body: response.body)
        } catch {
            throw WeChatPayAPIError.verification(error)
        }
        let now = clock.now()
        var fresh = WeChatPayVerificationKeys()
        var entries: [Entry] = []
        for certificate in downloaded where certificate.expiresAt > now {
            try fresh.addCertificate(pem: certificate.pem, serial: certificate.serial)
            entries.append(Entry(serial: certificate.serial, expiresAt: certificate.expiresAt))
        }
        guard !entries.isEmpty else {
            throw WeChatPayError.unreadableCertificate("every downloaded platform certificate has expired")
        }
        keys = fresh
        self.entries = entries.sorted { $0.expiresAt < $1.expiresAt }
        lastRefresh = now
    }

    struct Downloaded {
        var serial: String
        var pem: String
        var expiresAt: Date
    }

    /// The `data` of a `/v3/certificates` answer, decrypted.
    static func decode(_ body: [UInt8], cipher: APIv3Cipher, merchantSerial: String) throws -> [Downloaded] {
        let object = try JSONObject(body)
        guard let items = try object.optionalArray("data"), !items.isEmpty else {
            throw WeChatPayError.unreadableCertificate("the /v3/certificates answer has no data")
        }
        return try items.map { item in
            let entry = try JSONObject(item)
            let serial = try entry.string("serial_no").uppercased()
            guard serial != merchantSerial.uppercased() else {
                throw WeChatPayError.unreadableCertificate(
                    "serial \(serial) is the merchant API certificate, not a WeChat Pay platform certificate")
            }
            let plaintext = try EncryptedResource(try entry.object("encrypt_certificate")).decrypt(with: cipher)
            let pem = String(decoding: plaintext, as: UTF8.self)
            let certificate: Certificate
            do {
                certificate = try Certificate(pemEncoded: pem)
            } catch {
                throw WeChatPayError.unreadableCertificate("platform certificate \(serial): \(error)")
            }
            return Downloaded(serial: serial, pem: pem, expiresAt: certificate.notValidAfter)
        }
    }
}
