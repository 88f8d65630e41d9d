/// Verifies Alipay's asynchronous notifications on the raw form body, as received.
public struct AlipayNotificationVerifier: Sendable {
    let credentials: AlipayCredentials

    public init(credentials: AlipayCredentials) {
        self.credentials = credentials
    }

    /// URL-decodes the body, checks the RSA2 signature over every field but `sign` and `sign_type`,
    /// and types the result. Business checks are the caller's (``AlipayNotification/check(against:)``).
    public func verify(body: [UInt8]) throws(AlipayNotificationError) -> AlipayNotification {
        try AlipayNotification(fields: try verified(body: body))
    }

    /// The fields of a signed form (notification or return URL query) once its signature verifies.
    public func verifiedFields(body: [UInt8]) throws(AlipayNotificationError) -> [String: String] {
        try verified(body: body).dictionary
    }

    private func verified(body: [UInt8]) throws(AlipayNotificationError) -> FormFields {
        let fields: FormFields
        do {
            fields = try FormFields(parsing: body)
        } catch {
            throw .malformedBody(error)
        }
        guard let signature = fields["sign"], !signature.isEmpty else { throw .missingSignature }
        if let signType = fields["sign_type"], signType != "RSA2" { throw .unsupportedSignType(signType) }
        let content = fields.signContent(excluding: SignContent.notificationExclusions)
        guard credentials.isAlipaySignature(signature, over: content) else { throw .badSignature }
        return fields
    }
}
