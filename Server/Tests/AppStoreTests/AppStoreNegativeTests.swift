import ChannelSupport
import Crypto
import Foundation
import OrderSafeModel
import Sandbox
import Testing
import X509

@testable import AppStore

/// Signed data made by the sandbox App Store's authority, attacked every way the issue lists.
@Suite("App Store signed data: hostile input")
struct AppStoreNegativeTests {
    static let authority = try! SandboxAppStoreCA(now: Date(timeIntervalSince1970: 1_795_000_000))
    static let signedDate: Int64 = 1_795_000_100_000
    static let transaction =
        #"{"transactionId":"2000000812345678","originalTransactionId":"2000000812345678","bundleId":"com.example.app","productId":"com.example.coins60","purchaseDate":1795000100000,"originalPurchaseDate":1795000100000,"quantity":1,"type":"Consumable","appAccountToken":"7E3FB20B-4CDB-47CC-936D-99D65F608138","inAppOwnershipType":"PURCHASED","signedDate":1795000100000,"environment":"Sandbox","transactionReason":"PURCHASE","storefront":"CHN","storefrontId":"143465","price":6000,"currency":"CNY"}"#

    static func verifier(
        _ environment: AppStoreEnvironment = .sandbox, bundleID: String = "com.example.app",
        roots: [[UInt8]] = [authority.rootDER],
        cache: VerifiedChainCache = VerifiedChainCache()
    ) throws -> SignedDataVerifier {
        SignedDataVerifier(
            rootCertificates: try AppleRootCertificates.load(roots, requireApple: false), bundleID: bundleID,
            appAppleID: 1234,
            environment: environment, cache: cache)
    }

    /// A JWS with `header` (JSON) over `transaction`, signed by `key`.
    static func forge(header: String, key: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) throws -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(transaction.utf8))
        return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    static var x5c: [String] {
        [authority.leafDER, authority.intermediateDER, authority.rootDER].map { Data($0).base64EncodedString() }
    }

    @Test("a sandbox-signed transaction verifies, and typed fields come through")
    func valid() async throws {
        let decoded = try await Self.verifier().verifyTransaction(try Self.authority.sign(Self.transaction))
        #expect(decoded.transactionId == "2000000812345678" && decoded.price == 6000 && decoded.currency == "CNY")
        #expect(decoded.appAccountToken == UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138"))
    }

    @Test(
        "renewal info carrying appTransactionId and no bundleId is renewal info, not an app transaction of another app")
    func renewalInfoWithAppTransactionID() async throws {
        let renewal =
            #"{"originalTransactionId":"2000000812345678","autoRenewProductId":"com.example.monthly","productId":"com.example.monthly","autoRenewStatus":1,"signedDate":1795000100000,"environment":"Sandbox","appTransactionId":"704289572311573646","renewalDate":1797000000000}"#
        let signed = try Self.authority.sign(renewal)
        let verifier = try Self.verifier()
        #expect(try await verifier.verifyAny(signed).kind == .renewalInfo)
        #expect(try await verifier.verifyRenewalInfo(signed).autoRenewProductId == "com.example.monthly")
        await expectVerificationError("INVALID_ENVIRONMENT") {
            _ = try await Self.verifier(.production).verifyAny(signed)
        }
    }

    @Test(
        "the signature is checked before the payload is read: a crafted payload under a bad signature costs no parsing")
    func signatureBeforePayload() async throws {
        // Not JSON at all, but the signature is wrong: the verdict is the signature's, not the payload's format.
        let header = #"{"alg":"ES256","x5c":["\#(Self.x5c.joined(separator: "\",\""))"]}"#
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data("{\"a\":1,\"a\":".utf8))
        let forged =
            input + "."
            + Base64URL.encode(try P256.Signing.PrivateKey().signature(for: Data(input.utf8)).rawRepresentation)
        await expectVerificationError("VERIFICATION_FAILURE") {
            _ = try await Self.verifier().verifyTransaction(forged)
        }
    }

    @Test("alg none, HS256 and RS256; two or four certificates; a missing x5c")
    func headers() async throws {
        for alg in ["none", "HS256", "RS256"] {
            let header = #"{"alg":"\#(alg)","x5c":["\#(Self.x5c.joined(separator: "\",\""))"]}"#
            await expectVerificationError("INVALID_JWT_FORMAT") {
                _ = try await Self.verifier().verifyTransaction(try Self.forge(header: header))
            }
        }
        for count in [2, 4] {
            let certificates = Array((Self.x5c + Self.x5c).prefix(count))
            let header = #"{"alg":"ES256","x5c":["\#(certificates.joined(separator: "\",\""))"]}"#
            await expectVerificationError("INVALID_CHAIN_LENGTH") {
                _ = try await Self.verifier().verifyTransaction(try Self.forge(header: header))
            }
        }
        await expectVerificationError("INVALID_JWT_FORMAT") {
            _ = try await Self.verifier().verifyTransaction(try Self.forge(header: #"{"alg":"ES256"}"#))
        }
        let garbage = #"{"alg":"ES256","x5c":["bm90IGEgY2VydA==","bm90IGEgY2VydA==","bm90IGEgY2VydA=="]}"#
        await expectVerificationError("INVALID_CERTIFICATE") {
            _ = try await Self.verifier().verifyTransaction(try Self.forge(header: garbage))
        }
    }

    @Test(
        "a self-made authority with Apple's OIDs is not trusted; the right chain with a key that is not the leaf's fails"
    )
    func selfMadeRoot() async throws {
        let impostor = try SandboxAppStoreCA(now: Date(timeIntervalSince1970: 1_795_000_000))
        await expectVerificationError("INVALID_CHAIN") {
            _ = try await Self.verifier().verifyTransaction(try impostor.sign(Self.transaction))
        }
        // The genuine x5c, but signed by another key.
        let header = #"{"alg":"ES256","x5c":["\#(Self.x5c.joined(separator: "\",\""))"]}"#
        await expectVerificationError("VERIFICATION_FAILURE") {
            _ = try await Self.verifier().verifyTransaction(try Self.forge(header: header))
        }
    }

    @Test("one flipped bit in the header, the payload or the signature is refused")
    func flippedBytes() async throws {
        let jws = try Self.authority.sign(Self.transaction)
        let parts = jws.split(separator: ".").map { Array(Data(base64Encoded: Self.padded(String($0)))!) }
        for (segment, offset) in [(0, 10), (0, 300), (1, 5), (1, 60), (2, 0), (2, 63)] {
            var altered = parts
            altered[segment][offset] ^= 0x01
            let text = altered.map { Base64URL.encode(Data($0)) }.joined(separator: ".")
            do {
                _ = try await Self.verifier().verifyTransaction(text)
                Issue.record("a JWS with segment \(segment) altered at \(offset) verified")
            } catch let error as VerificationError {
                #expect(
                    ["VERIFICATION_FAILURE", "INVALID_JWT_FORMAT", "INVALID_CERTIFICATE", "INVALID_CHAIN"].contains(
                        error.name), "\(error)")
            }
        }
    }

    @Test(
        "wrong bundle id; a production verifier fed sandbox data; a certificate outside its validity at the signed date"
    )
    func appAndEnvironment() async throws {
        let jws = try Self.authority.sign(Self.transaction)
        await expectVerificationError("INVALID_APP_IDENTIFIER") {
            _ = try await Self.verifier(bundleID: "com.other.app").verifyTransaction(jws)
        }
        await expectVerificationError("INVALID_ENVIRONMENT") {
            _ = try await Self.verifier(.production).verifyTransaction(jws)
        }
        let old = Self.transaction.replacingOccurrences(
            of: #""signedDate":1795000100000"#, with: #""signedDate":1600000000000"#)
        await expectVerificationError("INVALID_CHAIN") {
            _ = try await Self.verifier().verifyTransaction(try Self.authority.sign(old))
        }
    }

    @Test(
        "a production verifier of app 1234 refuses production data of app 1235 with the right bundle id: INVALID_APP_IDENTIFIER"
    )
    func anotherAppsProductionData() async throws {
        // Notifications and app transactions carry appAppleId (transactions do not); both are production data of
        // another app under the same bundle id, so only the app id tells them apart.
        let notification =
            #"{"notificationType":"TEST","notificationUUID":"9ad56bd2-0bc6-42e0-af24-fd996d87a1e6","data":{"appAppleId":1235,"bundleId":"com.example.app","environment":"Production"},"version":"2.0","signedDate":1795000100000}"#
        let app =
            #"{"receiptType":"Production","appAppleId":1235,"bundleId":"com.example.app","applicationVersion":"1","receiptCreationDate":1795000100000,"requestDate":1795000100000,"originalApplicationVersion":"1","originalPurchaseDate":1795000100000}"#
        let verifier = try Self.verifier(.production)
        await expectVerificationError("INVALID_APP_IDENTIFIER") {
            _ = try await verifier.verifyNotification(try Self.authority.sign(notification))
        }
        await expectVerificationError("INVALID_APP_IDENTIFIER") {
            _ = try await verifier.verifyAppTransaction(try Self.authority.sign(app))
        }
        // The same data of app 1234 verifies: the refusal above is the app id's alone.
        let own = try await verifier.verifyNotification(
            try Self.authority.sign(notification.replacingOccurrences(of: "1235", with: "1234")))
        #expect(own.data?.appAppleId == 1234)
        let ownApp = try await verifier.verifyAppTransaction(
            try Self.authority.sign(app.replacingOccurrences(of: "1235", with: "1234")))
        #expect(ownApp.appAppleId == 1234)
    }

    @Test(
        "a verified chain is cached by header: one chain check, then signature checks only; a cached chain never covers other dates"
    )
    func cache() async throws {
        let cache = VerifiedChainCache(capacity: 2)
        let verifier = try Self.verifier(cache: cache)
        for _ in 0..<5 { _ = try await verifier.verifyTransaction(try Self.authority.sign(Self.transaction)) }
        #expect(cache.count == 1)
        let old = Self.transaction.replacingOccurrences(
            of: #""signedDate":1795000100000"#, with: #""signedDate":1600000000000"#)
        await expectVerificationError("INVALID_CHAIN") {
            _ = try await verifier.verifyTransaction(try Self.authority.sign(old))
        }
        #expect(cache.count == 1)
        // Bounded: three trusted authorities, two places.
        let others = try (0..<2).map { _ in try SandboxAppStoreCA(now: Date(timeIntervalSince1970: 1_795_000_000)) }
        let wide = try Self.verifier(roots: [Self.authority.rootDER] + others.map(\.rootDER), cache: cache)
        for authority in others { _ = try await wide.verifyTransaction(try authority.sign(Self.transaction)) }
        #expect(cache.count == 2)
    }

    @Test("headers alike in the hashed prefix are told apart by their bytes: a byte changed past it is another chain")
    func cacheKeysPastThePrefix() {
        let cache = VerifiedChainCache(capacity: 4)
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        func verified() -> ChainVerifier.Verified {
            ChainVerifier.Verified(
                leafKey: P256.Signing.PrivateKey().publicKey, validFrom: now, validUntil: now.addingTimeInterval(60))
        }
        let header = Array(repeating: UInt8(ascii: "A"), count: VerifiedChainCache.Key.hashedPrefix + 3_000)
        var other = header
        other[VerifiedChainCache.Key.hashedPrefix + 2_000] = UInt8(ascii: "B")
        let (first, second) = (verified(), verified())
        cache.store(first, for: header[...], now: now)
        #expect(cache.entry(other[...], now: now) == nil)
        cache.store(second, for: other[...], now: now)
        #expect(cache.count == 2)
        #expect(cache.entry(header[...], now: now)?.leafKey.rawRepresentation == first.leafKey.rawRepresentation)
        #expect(cache.entry(other[...], now: now)?.leafKey.rawRepresentation == second.leafKey.rawRepresentation)
        #expect(cache.entry(header.dropLast()[...], now: now) == nil)
    }

    @Test("truncated, empty and oversized segments never crash")
    func garbage() async throws {
        let jws = try Self.authority.sign(Self.transaction)
        for text in [
            "", ".", "..", "...", String(jws.prefix(40)), String(jws.dropLast(5)), jws + ".", "\u{0}.\u{0}.\u{0}",
            String(repeating: "A", count: 100_000) + ".e30.AA",
        ] {
            await #expect(throws: VerificationError.self) { _ = try await Self.verifier().verifyTransaction(text) }
        }
    }

    static func padded(_ base64URL: String) -> String {
        let standard = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return standard + String(repeating: "=", count: (4 - standard.count % 4) % 4)
    }
}
