import AppStore
import Foundation
import Ledger
@_spi(OrderSafeServer) import OrderSafeModel

extension AppStorePayments {
    /// Verifies the app's signed `AppTransaction` (as a transaction is: Apple's chain, this app's bundle and Apple
    /// id, the environment) and keeps what it says for `userID`: the version first bought, when, where. Answers all
    /// the user's app purchases.
    public func noteAppTransaction(_ jws: String, userID: String) async throws(AppTransactionError)
        -> AppPurchasesResponse
    {
        guard jws.utf8.count <= AppTransactionError.maxBytes else { throw .tooLarge }
        let app: AppTransaction
        do {
            app = try await verifier.verifyAppTransaction(jws)
        } catch {
            throw .invalid("\(error)")
        }
        guard let version = app.originalApplicationVersion, (1...64).contains(version.utf8.count),
            let environment = app.receiptType, (1...32).contains(environment.utf8.count)
        else { throw .invalid("the app transaction names no original application version or environment") }
        // Apple's `appTransactionId` is one per Apple ID; an older app transaction without it is keyed by its
        // original purchase (the same Apple ID's purchase of the app has one date).
        let key = app.appTransactionId ?? "purchase-\(app.originalPurchaseDate ?? 0)"
        guard (1...64).contains(key.utf8.count) else { throw .invalid("its appTransactionId is over 64 bytes") }
        let purchase = AppPurchase(
            appTransactionID: key, originalApplicationVersion: version,
            originalPurchaseDate: app.originalPurchaseDate.map(Date.init(millisecondsSince1970:)),
            environment: environment)
        do {
            guard try await context.ledger.noteAppPurchase(purchase, userID: userID, at: context.clock.now()) else {
                throw AppTransactionError.tooMany
            }
            return try await appPurchases(userID: userID)
        } catch let error as AppTransactionError {
            throw error
        } catch {
            throw .unavailable("\(error)")
        }
    }

    /// The app purchases the user's phones showed, earliest first.
    public func appPurchases(userID: String) async throws -> AppPurchasesResponse {
        AppPurchasesResponse(userID: userID, purchases: try await context.ledger.appPurchases(userID: userID))
    }
}

/// Why an app transaction was not kept.
public enum AppTransactionError: Error, Sendable, Hashable, CustomStringConvertible {
    case tooLarge
    case invalid(String)
    case tooMany
    case unavailable(String)

    /// An app transaction is a few kilobytes; 16 KiB is far beyond any.
    public static let maxBytes = 16 * 1024

    public var description: String {
        switch self {
        case .tooLarge: "a signed app transaction is at most \(Self.maxBytes) bytes"
        case .invalid(let why): "the app transaction is not one this app's App Store signed: \(why)"
        case .tooMany: "this user has shown the app purchases of \(AppPurchaseLimit.perUser) Apple IDs already"
        case .unavailable(let why): "the ledger cannot keep it now (\(why))"
        }
    }
}
