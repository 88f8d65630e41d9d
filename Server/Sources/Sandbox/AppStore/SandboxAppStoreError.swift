import Foundation

public enum SandboxAppStoreError: Error, Equatable, CustomStringConvertible {
    case unknownTransaction(String)
    case badPeriod(String)
    case tooMany(Int, limit: Int)
    case tooFewAccountTokens(Int, count: Int)
    case badAccountToken(line: Int)
    case notDue(String, Date)
    case notBilled(String)
    case stillRenews(String)
    case badEvent(String)

    public var description: String {
        switch self {
        case .tooMany(let count, let limit): "\(count) transactions asked for; 0 to \(limit) at a time"
        case .tooFewAccountTokens(let tokens, let count): "\(tokens) account tokens for \(count) transactions"
        case .badAccountToken(let line): "line \(line) is not a UUID"
        case .unknownTransaction(let id): "no transaction \(id)"
        case .badPeriod(let text): "'\(text)' is not a period like P7D, P1M or P1Y"
        case .notDue(let id, let end):
            "subscription \(id)'s period runs until \(end): nothing is billed or ended before"
        case .notBilled(let id): "subscription \(id) does not renew (auto-renew is off): nothing is billed"
        case .stillRenews(let id): "subscription \(id) renews: turn auto-renew off or fail its billing first"
        case .badEvent(let event):
            "'\(event.prefix(32))' is not auto_renew_on, auto_renew_off, renews_to, billing_fails or expires"
        }
    }
}
