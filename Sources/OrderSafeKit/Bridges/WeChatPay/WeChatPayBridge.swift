import Foundation
import OrderSafeModel

/// What the app writes for WeChat Pay: fill a `PayReq` from ``WeChatPayRequest``, `WXApi.send(_:)` it, and return
/// the `PayResp` that `onResp(_:)` receives (after `WXApi.handleOpen(_:delegate:)` or the universal-link handler).
public protocol WeChatPayBridge: PaymentAppBridge {
    func pay(_ request: WeChatPayRequest) async -> WeChatPayResult
}

/// `PayReq`'s fields, from the server's signed invoke parameters.
public struct WeChatPayRequest: Sendable, Hashable {
    public var appID: String
    public var partnerID: String
    public var prepayID: String
    public var package: String
    public var nonceStr: String
    /// Seconds since 1970, as `PayReq.timeStamp` wants it.
    public var timeStamp: UInt32
    public var sign: String

    init?(_ invocation: WeChatPayInvocation) {
        guard let timeStamp = UInt32(invocation.timestamp) else { return nil }
        appID = invocation.appid
        partnerID = invocation.partnerid
        prepayID = invocation.prepayid
        package = invocation.package
        nonceStr = invocation.noncestr
        self.timeStamp = timeStamp
        sign = invocation.sign
    }
}

/// `PayResp.errCode` and `errStr`. A hint only: whether the order is paid is the server's word.
public struct WeChatPayResult: Sendable, Hashable {
    public var errCode: Int32
    public var errStr: String?

    public init(errCode: Int32, errStr: String? = nil) {
        self.errCode = errCode
        self.errStr = errStr
    }

    /// The buyer came back without WeChat's answer (``PaymentResultRelay/appBecameActive(grace:)``): whether it was
    /// paid is asked of the server. Its code is none WeChat sends (theirs are 0 to −5).
    public static let noAnswer = WeChatPayResult(errCode: Int32.min, errStr: "no answer")

    var hint: ClientResultRequest.Result {
        switch errCode {
        case 0: .success
        case -2: .cancelled
        case -1, -3, -4, -5: .failed
        default: .pending
        }
    }

    var messageKey: String {
        if errCode == Self.noAnswer.errCode { return "wechat.noAnswer" }
        return (-5...0).contains(errCode) ? "wechat.\(errCode)" : "wechat.other"
    }
}

extension PaymentResultRelay where Result == WeChatPayResult {
    /// A relay for WeChat Pay, ending without an answer in ``WeChatPayResult/noAnswer``.
    public init() { self.init(noAnswer: .noAnswer) }
}
