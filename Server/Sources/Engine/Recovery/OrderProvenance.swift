import ChannelSupport
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel

/// What a payment carries to rebuild its order when the ledger has lost it (a database restored from a backup older
/// than the payment): the product and the user, in the provider's own field for the merchant's data — WeChat Pay's
/// `attach` (returned in the notification, the order query and the trade bill's 商户数据包 column), Alipay's
/// `passback_params` (returned in the notification and the trade query). The order number is the provider's
/// `out_trade_no`.
///
/// Written `os1~<product id>~<user id as base64url>`: product ids never hold `~`, base64url never does, and nothing in
/// it is changed by URL encoding or decoding, so it comes back byte for byte whichever way a provider passes it on.
/// Set by this server only (a buyer cannot reach these fields), and read back only from what the provider signed.
///
/// The providers' words: WeChat Pay's `attach` is "附加数据，在查询API和支付通知中原样返回" (returned as sent in the
/// query and the notification; APIv3 `string[1,128]`, v2 统一下单 `String(127)` — the shorter is kept), and its trade
/// bill has the 商户数据包 column. Alipay's `passback_params`: "本参数必须进行UrlEncode之后才可以发送给支付宝" (URL-encoded
/// when sent — https://developer.aliyun.com/article/707512); that note also says only the notification returns it,
/// but Ant's own alipay-sdk-python 3.7.1411 reads it from `alipay.trade.query`'s answer
/// (`alipay/aop/api/response/AlipayTradeQueryResponse.py`): the SDK wins, and a payment the bill lists is rebuilt
/// from the query. The bill itself has no column for it.
public struct OrderProvenance: Sendable, Hashable {
    public var productID: String
    public var userID: String

    public init(productID: String, userID: String) {
        self.productID = productID
        self.userID = userID
    }

    /// WeChat Pay's `attach` is at most 127 bytes in its v2 API, 128 in v3: the longest text any channel is given.
    public static let maxLength = 127

    private static let prefix = "os1~"

    /// The text the provider keeps; nil when it would exceed ``maxLength`` (a user id over 86 bytes): such an order
    /// is paid as any other, and a payment of it the ledger lost is flagged, not rebuilt.
    public var text: String? {
        let text = Self.prefix + productID + "~" + Base64URL.encode(Array(userID.utf8))
        return text.utf8.count <= Self.maxLength ? text : nil
    }

    /// Reads a text ``text`` wrote; nil for anything else (an empty field, another merchant's data, a bad encoding).
    public init?(text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maxLength, text.hasPrefix(Self.prefix) else { return nil }
        let fields = text.dropFirst(Self.prefix.count).split(separator: "~", omittingEmptySubsequences: false)
        guard fields.count == 2, Identifier.isValid(String(fields[0])),
            let user = Base64URL.decode(Array(fields[1].utf8)[...]), !user.isEmpty,
            Base64URL.encode(user) == fields[1],  // one spelling: no padding, no stray bits
            let userID = String(validating: user, as: UTF8.self)
        else { return nil }
        self.init(productID: String(fields[0]), userID: userID)
    }
}
