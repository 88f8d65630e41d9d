/// Which of WeChat Pay's two ways of signing the built-in WeChat Pay uses (`server.sandbox_wechatpay_signing`), as a
/// merchant account is set up for one of them: new merchants get the WeChat Pay public key (`PUB_KEY_ID_…`), older
/// ones platform certificates downloaded from `/v3/certificates`
/// (https://pay.weixin.qq.com/doc/v3/merchant/4012154180, "如何从平台证书切换成微信支付公钥").
public enum SandboxWeChatPaySigning: String, Sendable, Hashable, CaseIterable {
    case publicKey = "public_key"
    case platformCertificate = "platform_certificate"
}
