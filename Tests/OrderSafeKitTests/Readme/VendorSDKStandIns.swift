import Foundation

// Stand-ins for AlipaySDK and WeChat's OpenSDK with the names their Objective-C headers import as in Swift (see
// ../shared/reference/client-sdk-research.md §4–5), so the README's bridge code compiles and runs here. Each calls
// back at once with the result set in `nextResult`.

typealias CompletionBlock = ([AnyHashable: Any]?) -> Void

final class AlipaySDK: @unchecked Sendable {
    nonisolated(unsafe) static var nextResult: [AnyHashable: Any] = ["resultStatus": "9000", "memo": ""]
    nonisolated(unsafe) static var paidOrders: [String] = []
    private static let service = AlipaySDK()

    static func defaultService() -> AlipaySDK { service }

    func payOrder(_ orderStr: String, fromScheme schemeStr: String, callback completionBlock: @escaping CompletionBlock)
    {
        Self.paidOrders.append(orderStr)
        completionBlock(Self.nextResult)
    }

    func processOrder(withPaymentResult resultUrl: URL, standbyCallback completionBlock: @escaping CompletionBlock) {
        completionBlock(Self.nextResult)
    }
}

class BaseReq: NSObject {}

class BaseResp: NSObject {
    var errCode: Int32 = 0
    var errStr: String = ""
}

final class PayReq: BaseReq {
    var partnerId = ""
    var prepayId = ""
    var nonceStr = ""
    var timeStamp: UInt32 = 0
    var package = ""
    var sign = ""
}

final class PayResp: BaseResp {}

protocol WXApiDelegate: AnyObject {
    func onResp(_ resp: BaseResp)
}

enum WXApi {
    nonisolated(unsafe) static var delegate: WXApiDelegate?
    nonisolated(unsafe) static var nextErrCode: Int32 = 0
    nonisolated(unsafe) static var sent: [PayReq] = []

    static func send(_ req: BaseReq, completion: ((Bool) -> Void)? = nil) {
        if let pay = req as? PayReq { sent.append(pay) }
        completion?(true)
        // WeChat answers by reopening the app: handleOpen(_:delegate:) then calls onResp.
        let response = PayResp()
        response.errCode = nextErrCode
        delegate?.onResp(response)
    }

    @discardableResult
    static func handleOpen(_ url: URL, delegate: WXApiDelegate?) -> Bool {
        self.delegate = delegate
        return true
    }
}
