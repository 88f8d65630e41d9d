import Foundation

/// Amounts as the providers' bills write them, and the fee they take.
enum BillYuan {
    /// Yuan with two decimals, signed (`-59` fen → `-0.59`); with `decimals` above two, zeros pad them (WeChat Pay's
    /// fees: `0.59000`).
    static func string(_ fen: Int64, decimals: Int = 2) -> String {
        let magnitude = fen.magnitude
        return (fen < 0 ? "-" : "") + "\(magnitude / 100)." + String(format: "%02llu", magnitude % 100)
            + String(repeating: "0", count: max(0, decimals - 2))
    }

    /// The standard fee of Alipay's and WeChat Pay's app payments: 0.6%, rounded to the fen (half up); a refund
    /// returns the fee of the amount refunded.
    static func fee(_ fen: Int64) -> Int64 { (fen * 6 + 500) / 1000 }
}
