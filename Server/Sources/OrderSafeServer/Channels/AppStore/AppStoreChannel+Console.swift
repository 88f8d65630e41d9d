extension AppStoreChannel {
    /// The console's words about what only the App Store has: transactions held for this server's settings, and the
    /// subscription offers it signs.
    static let consoleTexts: [String: (en: String, zh: String)] = [
        "held_submissions": (
            "App Store transactions held: this server could not verify them", "暂存的 App Store 交易:本服务器无法验证"
        ),
        "held_explained": (
            "A wrong setting (appstore.bundle_id, app_apple_id, environment or root_certificates) makes every genuine purchase fail verification. They stay unfinished on the buyers' devices and are kept here; fix the setting, restart, then verify them again.",
            "设置错误(appstore.bundle_id、app_apple_id、environment 或 root_certificates)会使每笔真实购买都无法通过验证。这些交易在买家设备上保持未完成,并暂存在这里;请修正设置并重启,然后重新验证。"
        ),
        "offers_intro": (
            "The subscription offers the catalog lists, who may have each, and how often the server signed it and buyers took it. A purchase with an offer is recorded at the price the App Store charged.",
            "商品目录中的订阅优惠、每个优惠的适用对象，以及服务器签名与用户兑换的次数。使用优惠的购买按 App Store 实际扣款金额入账。"
        ),
        "offers_other_explained": (
            "Introductory offers and offer codes are the App Store's to give; they are counted here as buyers took them.",
            "首次优惠与优惠代码由 App Store 发放，此处按用户兑换次数统计。"
        ),
    ]
}
