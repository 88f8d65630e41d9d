import Engine
import Hummingbird
@_spi(OrderSafeServer) import OrderSafeModel

/// `POST /v1/appstore/transactions`: the app submits a StoreKit 2 signed transaction or a StoreKit 1 receipt and
/// learns whether to finish it (`recorded` for its transaction id, 200) or keep it unfinished (`rejected`, or an
/// error status: 503 `transaction_held` when this server's settings cannot verify it).
/// `POST /v1/appstore/sync`: a restore of what the user owns.
/// `POST /v1/appstore/offers/{offer_id}/signature` (`{"order_no"}`): a promotional offer signed for the purchase of
/// the user's unpaid order of an auto-renewable subscription, bound to that order.
/// `POST /v1/appstore/app-transaction` (`{"signed_app_transaction"}`) and `GET`: the app's own purchase per Apple ID
/// (`AppTransaction`: the version first bought), kept for the user.
struct AppStoreController {
    let payments: AppStorePayments

    /// Receipts of users with long purchase histories run to hundreds of kilobytes.
    static let maxBodyBytes = 1 << 20

    func addRoutes(to group: RouterGroup<OrderSafeRequestContext>) {
        group.post("appstore/transactions", use: submit)
        group.post("appstore/sync", use: sync)
        group.post("appstore/offers/:offer_id/signature", use: signOffer)
        group.post("appstore/app-transaction", use: noteAppTransaction)
        group.get("appstore/app-transaction") { _, context in
            try Response.json(try await payments.appPurchases(userID: try context.requireUser().id))
        }
    }

    struct AppTransactionBody: APIRequestBody {
        static let members: Set<String> = ["signed_app_transaction"]
        var signedAppTransaction: String

        enum CodingKeys: String, CodingKey {
            case signedAppTransaction = "signed_app_transaction"
        }
    }

    /// The app's signed `AppTransaction`, verified and kept for the user (the JWS itself is never logged).
    func noteAppTransaction(request: Request, context: OrderSafeRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let body = try await request.decodeJSON(
            AppTransactionBody.self, limit: AppTransactionError.maxBytes + 64)
        let purchases = try await payments.noteAppTransaction(body.signedAppTransaction, userID: user.id)
        context.logger.info("appstore app transaction", metadata: ["apple_ids": "\(purchases.purchases.count)"])
        return try Response.json(purchases)
    }

    struct OfferRequest: APIRequestBody {
        static let members: Set<String> = ["order_no"]
        var orderNo: String

        enum CodingKeys: String, CodingKey {
            case orderNo = "order_no"
        }
    }

    /// A promotional offer for the order's purchase; the signature itself is never logged.
    func signOffer(request: Request, context: OrderSafeRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let offerID = try context.parameters.require("offer_id")
        let body = try await request.decodeJSON(OfferRequest.self, limit: 4096)
        let signed = try await payments.signOffer(offerID, orderNo: body.orderNo, userID: user.id)
        context.logger.info(
            "appstore offer signed", metadata: ["order_no": "\(body.orderNo)", "offer_id": "\(offerID)"])
        return try Response.json(signed)
    }

    /// Restore: re-grants what the user owns, idempotently, following the App Store's history.
    func sync(request: Request, context: OrderSafeRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let body = try await request.decodeJSON(AppStoreSyncRequest.self, limit: Self.maxBodyBytes)
        let response = try await payments.sync(body, userID: user.id)
        context.logger.info(
            "appstore sync",
            metadata: ["transactions": "\(response.transactions.count)", "verdict": "\(response.verdict.rawValue)"])
        return Response.json(bytes: response.json)
    }

    func submit(request: Request, context: OrderSafeRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let submission = try await request.decodeJSON(
            AppStoreSubmission.self, limit: Self.maxBodyBytes)
        let response = try await payments.submit(submission, userID: user.id)
        for result in response.transactions {
            context.logger.info(
                "appstore submission",
                metadata: [
                    "transaction_id": "\(result.transactionID)", "verdict": "\(result.verdict.rawValue)",
                    "code": "\(result.error?.code ?? "-")",
                ])
        }
        return Response.json(bytes: response.json)
    }
}

extension AppTransactionError: APIErrorConvertible {
    var apiError: APIError {
        switch self {
        case .tooLarge: APIError(status: .contentTooLarge, code: "body_too_large", message: description)
        case .invalid: APIError.badRequest("invalid_app_transaction", description)
        case .tooMany: APIError(status: .conflict, code: "too_many_apple_ids", message: description)
        case .unavailable: APIError(status: .serviceUnavailable, code: "unavailable", message: description)
        }
    }
}

extension OfferRequestError: APIErrorConvertible {
    var apiError: APIError {
        switch self {
        case .unavailable: APIError(status: .serviceUnavailable, code: "offers_unavailable", message: description)
        case .invalidOfferID: APIError.badRequest("invalid_parameter", description)
        case .orderNotFound: APIError(status: .notFound, code: "order_not_found", message: description)
        case .notApplicable: APIError(status: .conflict, code: "offer_not_applicable", message: description)
        case .notListed: APIError(status: .notFound, code: "offer_not_found", message: description)
        case .notEligible, .outsideWindow, .limitReached, .merchantDeclined, .merchantSilent:
            APIError(status: .conflict, code: "offer_not_eligible", message: description)
        case .tooMany: APIError(status: .conflict, code: "too_many_offers", message: description)
        }
    }
}

extension AppStoreSubmissionError: APIErrorConvertible {
    var apiError: APIError {
        switch self {
        case .malformed: APIError.badRequest("invalid_submission", description)
        case .verificationUnavailable:
            APIError(status: .serviceUnavailable, code: "verification_unavailable", message: description)
        case .unverifiable: APIError(status: .serviceUnavailable, code: "transaction_held", message: description)
        case .productNotInCatalog: APIError(status: .conflict, code: "unknown_app_store_product", message: description)
        case .unbound, .anotherUsersToken:
            APIError(status: .conflict, code: "unbound_transaction", message: description)
        }
    }
}
