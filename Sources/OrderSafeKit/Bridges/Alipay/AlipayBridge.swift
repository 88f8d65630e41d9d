import Foundation
import OrderSafeModel

/// What the app writes for Alipay: hand the signed order string to `AlipaySDK.defaultService().payOrder(_:fromScheme:callback:)`
/// and return the result dictionary it gets (in the callback, or from `processOrderWithPaymentResult` when Alipay
/// reopens the app). docs/sdk.md shows the few lines with the real AlipaySDK.
public protocol AlipayBridge: PaymentAppBridge {
    func pay(orderString: String) async -> AlipayResult
}

/// The Alipay app's answer: `resultStatus` and `memo` of its result dictionary. A hint only: whether the order
/// is paid is the server's word (Alipay's notification or its trade query).
public struct AlipayResult: Sendable, Hashable {
    public var resultStatus: String
    public var memo: String?

    public init(resultStatus: String, memo: String? = nil) {
        self.resultStatus = resultStatus
        self.memo = memo
    }

    /// From the SDK's `[AnyHashable: Any]` result dictionary (`resultStatus` is a string; a number is accepted).
    public init(dictionary: [AnyHashable: Any]) {
        let status = dictionary["resultStatus"]
        resultStatus = (status as? String) ?? (status as? NSNumber)?.stringValue ?? ""
        memo = dictionary["memo"] as? String
    }

    /// The buyer came back without Alipay's answer (``PaymentResultRelay/appBecameActive(grace:)``): whether it
    /// was paid is asked of the server.
    public static let noAnswer = AlipayResult(resultStatus: "no_answer")

    /// What the code means.
    public enum Meaning: Sendable, Hashable {
        case paid, processing, failed, duplicateRequest, cancelled, networkError, unknown, noAnswer, other
    }

    public var meaning: Meaning {
        switch resultStatus {
        case "9000": .paid
        case "8000": .processing
        case "4000": .failed
        case "5000": .duplicateRequest
        case "6001": .cancelled
        case "6002": .networkError
        case "6004": .unknown
        case "no_answer": .noAnswer
        default: .other
        }
    }

    /// The hint the server is given. Everything but a plain failure or a cancellation may have been paid.
    var hint: ClientResultRequest.Result {
        switch meaning {
        case .paid: .success
        case .cancelled: .cancelled
        case .failed: .failed
        case .processing, .duplicateRequest, .networkError, .unknown, .noAnswer, .other: .pending
        }
    }

    var messageKey: String {
        ["9000", "8000", "4000", "5000", "6001", "6002", "6004", "no_answer"].contains(resultStatus)
            ? "alipay.\(resultStatus)" : "alipay.other"
    }
}

extension PaymentResultRelay where Result == AlipayResult {
    /// A relay for Alipay, ending without an answer in ``AlipayResult/noAnswer``.
    public init() { self.init(noAnswer: .noAnswer) }
}
