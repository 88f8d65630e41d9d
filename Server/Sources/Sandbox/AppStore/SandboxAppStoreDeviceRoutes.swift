import ChannelSupport
import Foundation
import HTTPTypes
import Hummingbird
import OrderSafeModel

/// The device queues over HTTP, for StoreKitStandIn and for people (`{prefix}` is `/sandbox/appstore`):
/// `GET {prefix}/devices/{device}/products?ids=a,b`, `POST …/purchase` (`product_id`, `app_account_token`,
/// `ask_to_buy`, `confirm`, `scene`), `POST …/promoted-purchase` (`product_id`: the user tapped it on the App Store;
/// `offer` {`id`, `type` `promotional` or `win_back`}: with that offer, iOS 18's `PurchaseIntent.offer`),
/// `POST …/apple-id` (`apple_id`: the App Store account the device is signed in to; renewals and refunds reach every
/// device of an Apple ID), `POST …/purchase-intents/take` (the intents waiting for the app, each once), `GET …/unfinished`, `GET …/entitlements`, `GET …/updates[?after=N]`, `POST …/finish`
/// (`transaction_id`), `GET …/ask-to-buy`, `POST …/ask-to-buy/{request}/approve|decline` (`?without_token=1`: the approved
/// transaction carries no `appAccountToken`), `POST …/deliver` (a
/// transaction made outside the app: `product_id`, `from` = `other_device` [`app_account_token`], `family_shared`,
/// `offer_code` [`offer_code`] or `renewal` [`original_transaction_id`]); `POST {prefix}/refund` (`transaction_id`) and
/// `GET {prefix}/payments` (every purchase, with its `appAccountToken` and the device that made it).
public struct SandboxAppStoreDeviceRoutes<Context: RequestContext>: Sendable {
    let devices: SandboxAppStoreDevices

    public init(devices: SandboxAppStoreDevices) {
        self.devices = devices
    }

    public func addRoutes(to group: RouterGroup<Context>) {
        let device = group.group("devices/:device").add(middleware: DeviceIDCheck<Context>())
        device.get("products") { request, context in
            let ids = (request.uri.queryParameters.get("ids") ?? "").split(separator: ",").prefix(200).map(String.init)
            let products = await devices.products(ids).map { product -> [String: Any] in
                var described: [String: Any] = [
                    "id": product.id, "type": product.type, "display_name": product.displayName,
                    "description": product.displayName,
                    "price": product.price.decimalString, "display_price": Self.displayPrice(product.price),
                    "currency": product.price.currency.code,
                    "family_shareable": false,
                ]
                described["subscription"] = product.subscription.map {
                    Self.subscription($0, currency: product.price.currency)
                }
                return described
            }
            return SandboxJSONObject.response(["products": products])
        }
        device.post("purchase") { request, context in
            try await SandboxJSONObject.handle(request, context: context) { object in
                let offer = try (object.optionalObject("promotional_offer")).map(Self.offer)
                let result = try await devices.purchase(
                    device: try context.parameters.require("device"), productID: try object.string("product_id"),
                    appAccountToken: try Self.token(object),
                    askToBuy: try object.optionalBool("ask_to_buy") ?? false,
                    confirm: try object.optionalBool("confirm") ?? true, scene: try Self.scene(object), offer: offer,
                    introductoryEligibility: try object.optionalString("introductory_offer_eligibility"))
                switch result {
                case .success(let signed): return ["result": "success", "signed_transaction": signed]
                case .pending(let requestID): return ["result": "pending", "request_id": requestID]
                case .userCancelled: return ["result": "user_cancelled"]
                case .productUnavailable: return ["result": "product_unavailable"]
                case .invalidOfferSignature: return ["result": "invalid_offer_signature"]
                }
            }
        }
        device.post("promoted-purchase") { request, context in
            try await SandboxJSONObject.handle(request, context: context) { object in
                let offer = try object.optionalObject("offer").map { offer in
                    let id = try offer.string("id")
                    guard (1...64).contains(id.utf8.count),
                        let kind = SandboxAppStoreDevices.PromotedOffer.Kind(rawValue: try offer.string("type"))
                    else { throw SandboxDeviceError.badOffer("an offer is an id of 1 to 64 bytes and a type") }
                    return SandboxAppStoreDevices.PromotedOffer(id: id, kind: kind)
                }
                try await devices.promote(
                    device: try context.parameters.require("device"), productID: try object.string("product_id"),
                    offer: offer)
                return ["queued": true]
            }
        }
        device.post("apple-id") { request, context in
            try await SandboxJSONObject.handle(request, context: context) { object in
                try await devices.signIn(
                    device: try context.parameters.require("device"), appleID: try object.string("apple_id"))
                return ["signed_in": true]
            }
        }
        device.post("purchase-intents/take") { _, context in
            let intents = await devices.takePurchaseIntents(device: try context.parameters.require("device"))
            return SandboxJSONObject.response([
                "intents": intents.map { intent -> [String: Any] in
                    var answer: [String: Any] = ["product_id": intent.productID]
                    if let offer = intent.offer { answer["offer"] = ["id": offer.id, "type": offer.kind.rawValue] }
                    return answer
                }
            ])
        }
        device.get("unfinished") { _, context in
            SandboxJSONObject.response([
                "signed_transactions": await devices.unfinished(device: try context.parameters.require("device"))
            ])
        }
        device.get("subscription-status") { request, context in
            let group = request.uri.queryParameters.get("group") ?? ""
            guard (1...64).contains(group.utf8.count) else {
                return SandboxJSONObject.response(
                    ["error": "group must be a subscription group id of 1 to 64 bytes"], status: .badRequest)
            }
            let statuses = try await devices.subscriptionStatuses(
                device: try context.parameters.require("device"), groupID: group)
            return SandboxJSONObject.response([
                "statuses": statuses.map {
                    [
                        "status": $0.status, "signed_transaction": $0.signedTransaction,
                        "signed_renewal_info": $0.signedRenewalInfo,
                    ] as [String: Any]
                }
            ])
        }
        device.get("app-transaction") { _, context in
            SandboxJSONObject.response([
                "signed_app_transaction": try await devices.appTransaction(
                    device: try context.parameters.require("device"))
            ])
        }
        device.post("original-app-version") { request, context in
            try await SandboxJSONObject.handle(request, context: context) { object in
                let version = try object.string("version")
                guard (1...32).contains(version.utf8.count) else {
                    throw SandboxDeviceError.badDelivery("version must be 1 to 32 bytes")
                }
                await devices.setOriginalAppVersion(version, device: try context.parameters.require("device"))
                return ["original_app_version": version]
            }
        }
        device.get("entitlements") { _, context in
            SandboxJSONObject.response([
                "signed_transactions": await devices.entitlements(device: try context.parameters.require("device"))
            ])
        }
        device.get("updates") { request, context in
            var after: Int?
            if let text = request.uri.queryParameters.get("after") {
                guard let cursor = Int(text), cursor >= 0 else {
                    return SandboxJSONObject.response(
                        ["error": "after must be a cursor this route answered (an integer ≥ 0)"], status: .badRequest)
                }
                after = cursor
            }
            let (signed, cursor) = await devices.updates(device: try context.parameters.require("device"), after: after)
            return SandboxJSONObject.response(["signed_transactions": signed, "cursor": cursor])
        }
        device.post("finish") { request, context in
            try await SandboxJSONObject.handle(request, context: context) { object in
                try await devices.finish(
                    device: try context.parameters.require("device"), transactionID: try object.string("transaction_id")
                )
                return [:]
            }
        }
        device.post("deliver") { request, context in
            try await SandboxJSONObject.handle(request, context: context) { object in
                let id = try await devices.deliverFromElsewhere(
                    device: try context.parameters.require("device"), productID: try object.string("product_id"),
                    try Self.elsewhere(object))
                return ["transaction_id": id]
            }
        }
        device.get("ask-to-buy") { _, context in
            let requests = await devices.askToBuyRequests(device: try context.parameters.require("device"))
            return SandboxJSONObject.response([
                "requests": requests.map { ["request_id": $0.requestID, "product_id": $0.productID] }
            ])
        }
        for (action, approve) in [("approve", true), ("decline", false)] {
            device.post("ask-to-buy/:request/\(action)") { request, context in
                do {
                    let id = try await devices.answerAskToBuy(
                        device: try context.parameters.require("device"),
                        requestID: try context.parameters.require("request"), approve: approve,
                        keepingToken: request.uri.queryParameters.get("without_token") != "1")
                    return SandboxJSONObject.response(id.map { ["transaction_id": $0] } ?? [:])
                } catch let error as SandboxDeviceError {
                    return SandboxJSONObject.response(["error": "\(error)"], status: .notFound)
                }
            }
        }
        group.get("payments") { _, _ in
            SandboxJSONObject.payments(
                try await devices.payments(), devices: await devices.purchasingDevices,
                scenes: await devices.purchaseScenes)
        }
        group.post("refund") { request, context in
            try await SandboxJSONObject.handle(request, context: context) { object in
                try await devices.refund(transactionID: try object.string("transaction_id"))
                return ["refunded": true]
            }
        }
    }

    /// How the storefront shows `price` (China's: the code, then the amount).
    static func displayPrice(_ price: Money) -> String {
        "\(price.currency.code) \(price.decimalString)"
    }

    /// A subscription's terms as the device's StoreKit describes them (`Product.SubscriptionInfo`): each offer with
    /// its payment mode, period, number of periods and price. A promotional or win-back offer's first period is the
    /// subscription's own, free at a price of zero; a free trial's price is zero in the product's `currency`.
    static func subscription(_ terms: SandboxAppStoreDevices.SubscriptionTerms, currency: CurrencyCode) -> [String: Any]
    {
        func offer(_ id: String?, mode: OfferPaymentMode, period: GrantPeriod, count: Int, price: Money)
            -> [String: Any]
        {
            var described: [String: Any] = [
                "payment_mode": mode.rawValue, "period": period.description, "period_count": count,
                "price": price.decimalString, "display_price": displayPrice(price),
            ]
            described["id"] = id
            return described
        }
        func listed(_ terms: SandboxAppStoreDevices.OfferTerms, period: GrantPeriod) -> [String: Any] {
            offer(
                terms.id, mode: terms.price.amountMinor == 0 ? .freeTrial : .payAsYouGo, period: period, count: 1,
                price: terms.price)
        }
        var described: [String: Any] = [
            "group_id": terms.groupID, "period": terms.period.description,
            "promotional_offers": terms.promotionalOffers.map { listed($0, period: terms.period) },
            "win_back_offers": terms.winBackOffers.map { listed($0, period: terms.period) },
        ]
        if let intro = terms.introductoryOffer {
            described["introductory_offer"] = offer(
                nil, mode: intro.paymentMode, period: intro.period, count: intro.periods,
                price: intro.price ?? Money(amountMinor: 0, currency: currency))
        }
        return described
    }

    /// What `POST …/deliver` names: `from`, and the one member that kind takes (any other is refused).
    static func elsewhere(_ object: JSONObject) throws -> SandboxAppStoreDevices.Elsewhere {
        let from = try object.string("from")
        let extra: String? =
            switch from {
            case "other_device": "app_account_token"
            case "offer_code": "offer_code"
            case "renewal": "original_transaction_id"
            case "family_shared": nil
            default:
                throw SandboxDeviceError.badDelivery("from must be other_device, family_shared, offer_code or renewal")
            }
        if let stray = object.memberNames.first(where: { !["product_id", "from", extra].contains($0) }) {
            throw SandboxDeviceError.badDelivery("'\(stray.prefix(32))' is not a member of a \(from) delivery")
        }
        switch from {
        case "other_device":
            return .otherDevice(appAccountToken: try token(object))
        case "offer_code":
            let code = try object.string("offer_code")
            guard (1...64).contains(code.utf8.count) else {
                throw SandboxDeviceError.badDelivery("offer_code must be 1 to 64 bytes")
            }
            return .offerCode(code)
        case "renewal": return .renewal(originalTransactionID: try object.string("original_transaction_id"))
        default: return .familyShared
        }
    }

    /// The optional `scene`: the title of the scene the purchase sheet was shown over, 1 to 64 bytes.
    static func scene(_ object: JSONObject) throws -> String? {
        try object.optionalString("scene").map { text in
            guard (1...64).contains(text.utf8.count) else { throw SandboxDeviceError.badScene }
            return text
        }
    }

    /// A `promotional_offer` in either form the device passes: `compact_jws`, or `key_id`, `nonce`, `signature` and
    /// `timestamp`.
    static func offer(_ signed: JSONObject) throws -> SignedOffer {
        let offerID = try signed.string("offer_id")
        if let jws = try signed.optionalString("compact_jws") { return .compactJWS(offerID: offerID, jws) }
        let nonce = try signed.string("nonce")
        guard let uuid = UUID(uuidString: nonce) else { throw SandboxDeviceError.badOffer("nonce is not a UUID") }
        return .signature(
            offerID: offerID, keyID: try signed.string("key_id"), nonce: uuid,
            signature: try signed.string("signature"),
            timestamp: try signed.int("timestamp"))
    }

    /// The optional `app_account_token`: a UUID.
    static func token(_ object: JSONObject) throws -> UUID? {
        try object.optionalString("app_account_token").map { text in
            guard let uuid = UUID(uuidString: text) else { throw SandboxDeviceError.badToken(text) }
            return uuid
        }
    }
}

/// Answers 400 before any device route runs when the path's device id is not one (``SandboxAppStoreDevices``).
struct DeviceIDCheck<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        guard let device = context.parameters.get("device"), SandboxAppStoreDevices.isDeviceID(device) else {
            return SandboxJSONObject.response(["error": SandboxDeviceError.badDevice.description], status: .badRequest)
        }
        return try await next(request, context)
    }
}

/// JSON answers with nested values, for the sandbox's own control routes.
enum SandboxJSONObject {
    static func response(_ object: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let body =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// Reads a JSON object body (16 KiB at most; a `null` member is refused: leave it out), runs `body`, and answers
    /// its result, or 400 with the error.
    static func handle<Context: RequestContext>(
        _ request: Request, context: Context, _ body: (JSONObject) async throws -> [String: Any]
    ) async throws -> Response {
        var request = request
        let bytes = try await request.collectBody(upTo: 16 * 1024)
        do {
            let object = try JSONObject(Array(buffer: bytes))
            if let null = object.memberNames.first(where: { object.raw($0)?.elementsEqual("null".utf8) == true }) {
                return response(["error": "'\(null.prefix(32))' is null; leave it out instead"], status: .badRequest)
            }
            return response(try await body(object))
        } catch {
            return response(["error": "\(error)"], status: .badRequest)
        }
    }

    /// What a simulator was paid, as `GET {prefix}/payments` lists it.
    static func payments(
        _ records: [SandboxPaymentRecord], devices: [String: String] = [:], scenes: [String: String] = [:]
    ) -> Response {
        let items = records.sorted { $0.providerTransactionID < $1.providerTransactionID }.map {
            record -> [String: Any] in
            var item: [String: Any] = ["provider_transaction_id": record.providerTransactionID]
            item["order_reference"] = record.orderReference
            item["amount"] = record.amount.map {
                ["amount_minor": $0.amountMinor, "currency": $0.currency.code] as [String: Any]
            }
            item["device"] = devices[record.providerTransactionID]
            item["scene"] = scenes[record.providerTransactionID]
            return item
        }
        return response(["payments": items])
    }
}
