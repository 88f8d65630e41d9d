import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeKit

/// Every StoreKit error, SKError code, Alipay resultStatus and WeChat errCode has a user-facing message in both
/// languages; the provider codes map to the hint the server gets.
@Suite("Messages and result codes")
struct MessagesTests {
    static var everyError: [OrderSafeError] {
        var errors: [OrderSafeError] = StoreFailure.StoreKitErrorKind.allCases.map { .store(.storeKit($0)) }
        errors += StoreFailure.PurchaseErrorKind.allCases.map { .store(.purchase($0)) }
        errors += (0...22).map { .store(.skError($0)) } + [.store(.other("x"))]
        errors += ["9000", "8000", "4000", "5000", "6001", "6002", "6004", "1234"].map {
            .alipay(AlipayResult(resultStatus: $0))
        }
        errors += [0, -1, -2, -3, -4, -5, 7].map { .wechatPay(WeChatPayResult(errCode: $0)) }
        errors += [
            .server(.unreachable("x")), .server(.unavailable(status: 503, code: "unavailable")),
            .server(.unavailable(status: 503, code: "provider_unavailable")),
            .server(.refused(status: 400, code: "bad", message: "")),
            .server(.malformedAnswer("x")), .server(.signedOut), .productNotFound("p"),
            .channelNotOffered(productID: "p", channel: .alipay),
            .paymentsNotAllowed, .bridgeMissing(.alipay), .rejected(code: "transaction_revoked", message: ""),
            .rejected(code: "transaction_belongs_to_another_user", message: ""),
            .rejected(code: "invalid_transaction", message: ""),
            .journalUnavailable("x"), .nothingToRefund("p"),
        ]
        return errors
    }

    @Test("every error has a message in Simplified Chinese and in English, and they differ")
    func everyErrorHasBothLanguages() {
        for error in Self.everyError {
            let (key, _) = error.messageKey
            #expect(Messages.has(key, .english), "\(key) has no English text")
            #expect(Messages.has(key, .simplifiedChinese), "\(key) has no Chinese text")
            let english = error.message(in: .english)
            let chinese = error.message(in: .simplifiedChinese)
            #expect(english != chinese, "\(key)")
            #expect(!english.contains("{") && !chinese.contains("{"), "\(key): a placeholder left unfilled")
        }
    }

    @Test("outcomes have messages in both languages")
    func outcomes() {
        let states: [PurchaseOutcome.State] = [
            .fulfilled, .pending, .cancelled, .awaitingConfirmation, .refunded, .underReview,
            .failed(.paymentsNotAllowed),
        ]
        for state in states {
            let outcome = PurchaseOutcome(orderNo: "OS-1", productID: "p", channel: .appStore, state: state)
            #expect(outcome.message(in: .english) != outcome.message(in: .simplifiedChinese))
            #expect(!outcome.message(in: .simplifiedChinese).hasPrefix("outcome."))
        }
    }

    @Test("SK error codes 0…21 each have their own text; unknown codes say their number")
    func skErrors() {
        let texts = Set((0...21).map { OrderSafeError.store(.skError($0)).messageKey.key })
        #expect(texts.count == 22)
        #expect(OrderSafeError.store(.skError(99)).message(in: .english).contains("99"))
        #expect(OrderSafeError.store(.skError(2)).message(in: .simplifiedChinese) == "您已取消购买。")
    }

    @Test("Alipay codes: 9000 is a success hint, 6001 cancelled, 4000 failed, everything uncertain is pending")
    func alipayHints() {
        let hints = [
            "9000": ClientResultRequest.Result.success, "8000": .pending, "4000": .failed, "5000": .pending,
            "6001": .cancelled,
            "6002": .pending, "6004": .pending, "": .pending, "42": .pending,
        ]
        for (code, hint) in hints { #expect(AlipayResult(resultStatus: code).hint == hint, "\(code)") }
        #expect(
            AlipayResult(dictionary: ["resultStatus": "9000", "memo": "ok"])
                == AlipayResult(resultStatus: "9000", memo: "ok"))
        #expect(AlipayResult(dictionary: ["resultStatus": NSNumber(value: 6001)]).resultStatus == "6001")
        #expect(AlipayResult(dictionary: [:]).hint == .pending)
    }

    @Test("WeChat codes: 0 success, -2 cancelled, -1/-3/-4/-5 failed, anything else pending")
    func wechatHints() {
        let hints: [Int32: ClientResultRequest.Result] = [
            0: .success, -1: .failed, -2: .cancelled, -3: .failed, -4: .failed, -5: .failed, 1: .pending,
        ]
        for (code, hint) in hints { #expect(WeChatPayResult(errCode: code).hint == hint, "\(code)") }
    }

    @Test("the user's preferred languages choose the messages' language")
    func preferredLanguage() {
        #expect(MessageLanguage.preferred(["zh-Hans-CN", "en"]) == .simplifiedChinese)
        #expect(MessageLanguage.preferred(["zh-CN"]) == .simplifiedChinese)
        #expect(MessageLanguage.preferred(["zh-Hant-TW", "en-US"]) == .english)
        #expect(MessageLanguage.preferred(["fr-FR"]) == .english)
        #expect(MessageLanguage.preferred([]) == .english)
    }

    @Test("confirmation polling: backoff doubles up to the cap and stops within the timeout")
    func confirmationDelays() {
        let policy = ConfirmationPolicy(firstDelay: 0.3, maxDelay: 5, timeout: 60)
        let delays = policy.delays
        #expect(delays.prefix(4) == [0.3, 0.6, 1.2, 2.4])
        #expect(delays.allSatisfy { $0 <= 5 })
        #expect(delays.reduce(0, +) <= 60)
        #expect(ConfirmationPolicy(firstDelay: 0, maxDelay: 0, timeout: 0).delays.isEmpty)
        // A policy that never ends still polls a bounded number of times, each at least a millisecond apart.
        for policy in [
            ConfirmationPolicy(firstDelay: 0, maxDelay: 0, timeout: 60),
            ConfirmationPolicy(firstDelay: 1, maxDelay: .infinity, timeout: .infinity),
            ConfirmationPolicy(firstDelay: .nan, maxDelay: .nan, timeout: 1),
        ] {
            #expect(policy.delays.count <= ConfirmationPolicy.maxPolls)
            #expect(policy.delays.allSatisfy { $0 >= 0.001 })
        }
        #expect(ConfirmationPolicy(firstDelay: 0, maxDelay: 0, timeout: 60).delays.count == ConfirmationPolicy.maxPolls)
        // The waits in nanoseconds, for Task.sleep(nanoseconds:): never a trap.
        #expect(Task.nanoseconds(1.5) == 1_500_000_000)
        #expect([-1, .nan, 0].map(Task.nanoseconds) == [0, 0, 0])
        #expect([.infinity, 1e300].map(Task.nanoseconds) == [UInt64.max, UInt64.max])
    }
}
