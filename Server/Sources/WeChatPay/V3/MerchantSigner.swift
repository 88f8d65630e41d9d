import ChannelSupport
import Foundation
import _CryptoExtras

/// The merchant's API v3 identity: signs requests (`Authorization`) and app invoke parameters.
public struct MerchantSigner: Sendable {
    public let merchantID: String
    /// The serial number of the merchant API certificate (`serial_no`).
    public let certificateSerial: String
    let privateKey: _RSA.Signing.PrivateKey

    /// `privateKey` is the merchant API private key, PEM (PKCS#1 or PKCS#8).
    public init(merchantID: String, certificateSerial: String, privateKey: String) throws(WeChatPayError) {
        do {
            self.privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: privateKey)
        } catch {
            throw .unreadableKey("the merchant private key")
        }
        self.merchantID = merchantID
        self.certificateSerial = certificateSerial
    }

    /// The public half of the merchant key (DER), to spot it configured where WeChat Pay's key belongs.
    public var publicKeyDER: Data { privateKey.publicKey.derRepresentation }

    /// The message an `Authorization` signature covers: `METHOD\nPATH?QUERY\nTIMESTAMP\nNONCE\nBODY\n`.
    public static func requestMessage(
        method: String, pathAndQuery: String, timestamp: Int64, nonce: String, body: String
    ) -> String {
        "\(method)\n\(pathAndQuery)\n\(timestamp)\n\(nonce)\n\(body)\n"
    }

    /// `WECHATPAY2-SHA256-RSA2048 mchid="…",nonce_str="…",timestamp="…",serial_no="…",signature="…"`.
    public func authorization(method: String, pathAndQuery: String, timestamp: Int64, nonce: String, body: String)
        throws -> String
    {
        let signature = try SHA256WithRSA.sign(
            Self.requestMessage(
                method: method, pathAndQuery: pathAndQuery, timestamp: timestamp, nonce: nonce, body: body),
            with: privateKey)
        return
            #"WECHATPAY2-SHA256-RSA2048 mchid="\#(merchantID)",nonce_str="\#(nonce)",timestamp="\#(timestamp)",serial_no="\#(certificateSerial)",signature="\#(signature)""#
    }

    /// The parameters the app passes to the WeChat SDK's `PayReq` for a `prepay_id`.
    public func appInvocation(appID: String, prepayID: String, timestamp: Int64, nonce: String) throws -> [String:
        String]
    {
        let sign = try SHA256WithRSA.sign("\(appID)\n\(timestamp)\n\(nonce)\n\(prepayID)\n", with: privateKey)
        return [
            "appid": appID, "partnerid": merchantID, "prepayid": prepayID, "package": "Sign=WXPay", "noncestr": nonce,
            "timestamp": String(timestamp), "sign": sign,
        ]
    }
}
