import Foundation

/// The old-style transaction receipt (`SKPaymentTransaction.transactionReceipt`, iOS 6): base64 of a
/// NeXTSTEP-style dictionary whose `purchase-info` is base64 of another holding `transaction-id`.
public enum TransactionReceipt {
    /// The `transaction-id` of a transaction receipt, or nil when there is none.
    public static func transactionID(_ base64: String) -> String? {
        guard let outer = decode(base64), let purchaseInfo = value("purchase-info", in: outer),
            let inner = decode(purchaseInfo)
        else {
            return nil
        }
        return value("transaction-id", in: inner)
    }

    private static func decode(_ base64: String) -> String? {
        guard let data = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)),
            data.count <= 1 << 20
        else { return nil }
        return String(data: data, encoding: .utf8)
    }

    /// The quoted value of `"key" = "value";`.
    private static func value(_ key: String, in text: String) -> String? {
        guard let keyRange = text.range(of: "\"\(key)\"") else { return nil }
        let rest = text[keyRange.upperBound...].drop { $0 == " " || $0 == "\t" || $0 == "\n" }
        guard rest.first == "=" else { return nil }
        let afterEquals = rest.dropFirst().drop { $0 == " " || $0 == "\t" || $0 == "\n" }
        guard afterEquals.first == "\"", let end = afterEquals.dropFirst().firstIndex(of: "\"") else { return nil }
        return String(afterEquals[afterEquals.index(after: afterEquals.startIndex)..<end])
    }
}
