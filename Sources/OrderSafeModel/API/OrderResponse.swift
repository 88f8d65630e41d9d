/// Body answered by `POST /v1/orders` and `GET /v1/orders/{order_no}`.
public struct OrderResponse: Codable, Hashable, Sendable {
    public var order: Order
    /// For Alipay orders when created: what the app hands to the Alipay SDK.
    public var alipay: AlipayInvocation?
    /// For WeChat Pay orders when created: what the app hands to the WeChat SDK's `PayReq`.
    public var wechatpay: WeChatPayInvocation?
    /// In the answer to `POST /v1/orders/{order_no}/client-result`: what the provider, asked then, said of an order
    /// that is not final (absent when it was not asked).
    public var providerAnswer: ProviderAnswer?
    /// In the answer to `GET /v1/orders/{order_no}` of a paid order: the provider's id of its payment (the App Store
    /// transaction id, which Apple's refund sheet takes; Alipay's `trade_no`; WeChat Pay's `transaction_id`).
    public var providerTransactionID: String?

    public init(
        order: Order, alipay: AlipayInvocation? = nil, wechatpay: WeChatPayInvocation? = nil,
        providerAnswer: ProviderAnswer? = nil, providerTransactionID: String? = nil
    ) {
        self.order = order
        self.alipay = alipay
        self.wechatpay = wechatpay
        self.providerAnswer = providerAnswer
        self.providerTransactionID = providerTransactionID
    }

    enum CodingKeys: String, CodingKey {
        case order, alipay, wechatpay
        case providerAnswer = "provider_answer"
        case providerTransactionID = "provider_transaction_id"
    }
}

/// What a provider said of an open order when the server asked it.
public enum ProviderAnswer: String, Codable, Hashable, Sendable {
    /// Not paid (Alipay `WAIT_BUYER_PAY` or no such trade yet, WeChat Pay `NOTPAY`): the order stays payable until it
    /// expires, so a payment made later is still recorded.
    case notPaid = "not_paid"
}

/// The signed `alipay.trade.app.pay` order string for the Alipay SDK's `payOrder`.
public struct AlipayInvocation: Codable, Hashable, Sendable {
    public var orderString: String

    public init(orderString: String) {
        self.orderString = orderString
    }

    enum CodingKeys: String, CodingKey {
        case orderString = "order_string"
    }
}

/// The signed parameters for the WeChat SDK's `PayReq` (`partnerId`, `prepayId`, `package`, `nonceStr`,
/// `timeStamp`, `sign`), field names as WeChat Pay spells them.
public struct WeChatPayInvocation: Codable, Hashable, Sendable {
    public var appid: String
    public var partnerid: String
    public var prepayid: String
    public var package: String
    public var noncestr: String
    public var timestamp: String
    public var sign: String

    public init(
        appid: String, partnerid: String, prepayid: String, package: String, noncestr: String, timestamp: String,
        sign: String
    ) {
        self.appid = appid
        self.partnerid = partnerid
        self.prepayid = prepayid
        self.package = package
        self.noncestr = noncestr
        self.timestamp = timestamp
        self.sign = sign
    }
}
