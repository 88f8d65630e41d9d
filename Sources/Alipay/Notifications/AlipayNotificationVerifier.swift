/// Verifies Alipay's asynchronous notifications on the raw form body, as received.
public struct AlipayNotificationVerifier: Sendable {
    let credentials: AlipayCredentials

    public init(credentials: AlipayCredentials) {
        self.credentials = credentials
    }

    /// URL-decodes the body, checks the RSA2 signature over every field but `sign` and `sign_type`,
    /// and types the result. Business checks are the caller's (``AlipayNotification/check(against:)``).
    public func verify(body: some Collection<UInt8>) throws(AlipayNotificationError) -> AlipayNotification {
        try AlipayNotification(fields: try verifiedFields(body: body))
    }

    /// The fields of a signed form (notification or return URL query) once its signature verifies.
    public func verifiedFields(body: some Collection<UInt8>) throws(AlipayNotificationError) -> [String: String] {
        let fields: [String: String]
        do {
            fields = try FormEncoding.parse(body)
        } catch {
            throw .malformedBody(error)
        }
        guard let signature = fields["sign"], !signature.isEmpty else { throw .missingSignature }
        if let signType = fields["sign_type"], signType != "RSA2" { throw .unsupportedSignType(signType) }
        let content = SignContent.make(fields, excluding: SignContent.notificationExclusions)
        guard credentials.isAlipaySignature(signature, over: Array(content.utf8)) else { throw .badSignature }
        return fields
    }
}
