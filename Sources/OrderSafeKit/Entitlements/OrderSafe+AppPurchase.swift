import Foundation
import OrderSafeModel

extension OrderSafe {
    /// Sends StoreKit's `AppTransaction` (iOS 16, macOS 13) — the app's own purchase by this phone's Apple ID — to
    /// the server, which verifies it and keeps it for the signed-in user, and answers every Apple ID's purchase of the
    /// app the user's phones have shown: `AppPurchasesResponse.originalApplicationVersion` is the version the user
    /// first had (a paid app gone free grants its early buyers what they paid for). Where StoreKit has no app
    /// transaction, what the server knows already. Signed out: nothing.
    public func sendAppTransaction() async throws(OrderSafeError) -> AppPurchasesResponse {
        guard let asked = userID else { throw .server(.signedOut) }
        let signed: String?
        do {
            signed = try await store.appTransaction()
        } catch {
            throw .store((error as? StoreFailure) ?? .other("\(error)"))
        }
        let answer: AppPurchasesResponse
        do {
            if let signed {
                answer = try await api.submitAppTransaction(signed)
            } else {
                answer = try await api.appPurchases()
            }
        } catch let problem as ServerProblem {
            throw .server(problem)
        } catch {
            throw .server(.malformedAnswer("\(error)"))
        }
        guard answer.userID == asked else { throw .server(.tokenOfAnotherUser) }
        guard userID == asked else { throw .server(.userChanged) }
        return answer
    }
}
