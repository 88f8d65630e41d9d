import ChannelSupport
import Foundation
import OrderSafeModel
import Testing

@testable import WeChatPay

struct FixedClock: WallClock {
    var date: Date
    func now() -> Date { date }
}

enum Vectors {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/vectors/wechatpay")

    static let available: Bool = {
        let present = FileManager.default.fileExists(atPath: directory.path)
        if !present { print("⚠️  ../shared/vectors is missing: the WeChat Pay vector tests are SKIPPED.") }
        return present
    }()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(path), encoding: .utf8)
    }

    static func json(_ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent(path)))
            as! [String: Any]
    }
}

/// Vectors W1–W7 and C of `../shared/vectors/CNPAY-VECTORS.md`.
@Suite("WeChat Pay vectors", .enabled(if: Vectors.available))
struct WeChatPayVectorTests {
    @Test("W1: SHA256withRSA signature, verified by platform certificate and by public key")
    func signature() throws {
        let vector = try Vectors.json("go/sign_vector.json")
        let signer = try MerchantSigner(
            merchantID: "1234567890", certificateSerial: "X",
            privateKey: try Vectors.text("go/test_private_key_pkcs8.pem"))
        let expected = vector["expected_signature"] as! String
        #expect(try SHA256WithRSA.sign("source", with: signer.privateKey) == expected)
        var keys = WeChatPayVerificationKeys()
        #expect(
            try keys.addCertificate(pem: try Vectors.text("go/platform_cert_F5765756002FDD77.pem"))
                == "F5765756002FDD77")
        try keys.addPublicKey(
            id: "PUB_KEY_ID_F5765756002FDD77", pem: try Vectors.text("go/wechatpay_public_key_F5765756002FDD77.pem"))
        for serial in ["F5765756002FDD77", "PUB_KEY_ID_F5765756002FDD77"] {
            let key = try keys.key(serial: serial)
            #expect(SHA256WithRSA.verify(expected, over: Array("source".utf8), with: key))
            #expect(!SHA256WithRSA.verify(expected, over: Array("wrong source".utf8), with: key))
            #expect(!SHA256WithRSA.verify(expected, over: [], with: key))
            #expect(!SHA256WithRSA.verify("", over: Array("source".utf8), with: key))
            #expect(!SHA256WithRSA.verify("invalid base64 signature", over: Array("source".utf8), with: key))
        }
        #expect(throws: WeChatPayError.unknownSerial("UNKNOWN")) { try keys.key(serial: "UNKNOWN") }
    }

    @Test("W2, W3: AEAD known answers; a wrong key, nonce, AAD or ciphertext fails")
    func aead() throws {
        let vectors = try Vectors.json("go/aead_vectors.json")
        let go = vectors["go_utils_aes_test"] as! [String: Any]
        let goCipher = APIv3Cipher(rawKey: Array("testAPIv3Key0000".utf8))
        #expect(
            try goCipher.decrypt(
                ciphertext: go["ciphertext"] as! String, nonce: go["nonce"] as! String,
                associatedData: go["associated_data"] as! String) == Array("Hello World".utf8))
        #expect(throws: WeChatPayError.decryptionFailed) {
            try APIv3Cipher(rawKey: Array("testAPIv3Key1111".utf8)).decrypt(
                ciphertext: go["ciphertext"] as! String, nonce: go["nonce"] as! String,
                associatedData: go["associated_data"] as! String)
        }
        #expect(throws: WeChatPayError.decryptionFailed) {
            try goCipher.decrypt(
                ciphertext: "SGVsbG8gV29ybGQK", nonce: go["nonce"] as! String,
                associatedData: go["associated_data"] as! String)
        }
        #expect(throws: WeChatPayError.invalidAPIv3KeyLength(13)) { try APIv3Cipher(apiV3Key: "not a aes key") }

        let java = vectors["java_AeadAesCipherTest"] as! [String: Any]
        let cipher = try APIv3Cipher(apiV3Key: java["apiv3_key"] as! String)
        let ciphertext = java["ciphertext"] as! String
        #expect(
            try cipher.decrypt(ciphertext: ciphertext, nonce: "uluk4a9R25RW", associatedData: "associatedData")
                == Array("message".utf8))
        #expect(
            try cipher.encrypt(Array("message".utf8), nonce: "uluk4a9R25RW", associatedData: "associatedData")
                == ciphertext)
        #expect(throws: WeChatPayError.decryptionFailed) {
            try cipher.decrypt(ciphertext: ciphertext, nonce: "uluk4a9R25RW", associatedData: "bad-associatedData")
        }
        #expect(throws: WeChatPayError.decryptionFailed) {
            try cipher.decrypt(ciphertext: ciphertext, nonce: "bad-4a9R25RW", associatedData: "associatedData")
        }
        #expect(throws: WeChatPayError.decryptionFailed) {
            try cipher.decrypt(
                ciphertext: Data(count: 128).base64EncodedString(), nonce: "uluk4a9R25RW",
                associatedData: "associatedData")
        }
        #expect(throws: WeChatPayError.decryptionFailed) {
            try cipher.decrypt(
                ciphertext: String(ciphertext.prefix(8)), nonce: "uluk4a9R25RW", associatedData: "associatedData")
        }
    }

    @Test("W4: the full notification verifies and decrypts at its own time, and is stale five minutes later")
    func notification() async throws {
        let vector = try Vectors.json("go/notify_vector.json")
        var keys = WeChatPayVerificationKeys()
        try keys.addCertificate(pem: try Vectors.text("go/platform_cert_D7CE59D1F522D701.pem"))
        let headers = vector["headers"] as! [String: String]
        let body = Array((vector["body"] as! String).utf8)
        func parser(at seconds: Double) throws -> WeChatPayNotificationParser {
            WeChatPayNotificationParser(
                verifier: SignedMessageVerifier(
                    keys: keys, clock: FixedClock(date: Date(timeIntervalSince1970: seconds))),
                cipher: APIv3Cipher(rawKey: Array((vector["apiv3_key"] as! String).utf8)))
        }
        let notification = try await parser(at: 1_624_523_846).parse(headers: headers, body: body)
        #expect(notification.eventType == "PAYSCORE.USER_OPEN_SERVICE")
        #expect(String(decoding: notification.plaintext, as: UTF8.self) == vector["expected_plaintext"] as? String)
        await #expect(throws: WeChatPayError.staleTimestamp(seconds: 1_624_523_846, now: 1_624_524_147)) {
            try await parser(at: 1_624_524_147).parse(headers: headers, body: body)
        }
        var altered = body
        altered[10] ^= 1
        await #expect(throws: WeChatPayError.badSignature) {
            try await parser(at: 1_624_523_846).parse(headers: headers, body: altered)
        }
        for name in ["Wechatpay-Nonce", "Wechatpay-Timestamp", "Wechatpay-Serial", "Wechatpay-Signature"] {
            var missing = headers
            missing[name] = nil
            await #expect(throws: WeChatPayError.missingHeader(name)) {
                try await parser(at: 1_624_523_846).parse(headers: missing, body: body)
            }
        }
        var wrongSerial = headers
        wrongSerial["Wechatpay-Serial"] = "F5765756002FDD77"
        await #expect(throws: WeChatPayError.unknownSerial("F5765756002FDD77")) {
            try await parser(at: 1_624_523_846).parse(headers: wrongSerial, body: body)
        }
        let wrongKey = WeChatPayNotificationParser(
            verifier: SignedMessageVerifier(
                keys: keys, clock: FixedClock(date: Date(timeIntervalSince1970: 1_624_523_846))),
            cipher: APIv3Cipher(rawKey: Array("testMchAPIv3Key1".utf8)))
        await #expect(throws: WeChatPayError.decryptionFailed) {
            try await wrongKey.parse(headers: headers, body: body)
        }
    }

    @Test("W5: the /v3/certificates resource decrypts to the platform certificate with its serial")
    func certificateDownload() throws {
        let vector = (try Vectors.json("go/aead_vectors.json"))["java_download_certificate"] as! [String: Any]
        let cipher = try APIv3Cipher(apiV3Key: vector["apiv3_key"] as! String)
        let ciphertext = try Vectors.text("java/download_cert_ciphertext.b64").trimmingCharacters(
            in: .whitespacesAndNewlines)
        let plaintext = try cipher.decrypt(ciphertext: ciphertext, nonce: "14b16c03dc1b", associatedData: "certificate")
        let pem = String(decoding: plaintext, as: UTF8.self)
        #expect(
            pem.trimmingCharacters(in: .whitespacesAndNewlines)
                == (try Vectors.text("java/download_cert_plaintext.pem")).trimmingCharacters(
                    in: .whitespacesAndNewlines))
        var keys = WeChatPayVerificationKeys()
        #expect(try keys.addCertificate(pem: pem) == "5DEA10EF55877E3CF6C33255C2E7DEFFF7E427EC")
    }

    @Test("W6: a PHP-escaped body verifies only as received, and decrypts to a certificate")
    func escapedBody() async throws {
        let vector = try Vectors.json("yansongda/v3_callback_vector.json")
        var keys = WeChatPayVerificationKeys()
        // yansongda's test configuration files this certificate under the serial the notification names.
        try keys.addCertificate(
            pem: try Vectors.text("yansongda/wechatAppPublicKey.pem"),
            serial: "45F59D4DABF31918AFCEC556D5D2C6E376675D57")
        let headers = vector["headers"] as! [String: String]
        let raw = vector["raw_body"] as! String
        let parser = WeChatPayNotificationParser(
            verifier: SignedMessageVerifier(
                keys: keys, clock: FixedClock(date: Date(timeIntervalSince1970: 1_626_444_144))),
            cipher: try APIv3Cipher(apiV3Key: vector["apiv3_key"] as! String))
        let notification = try await parser.parse(headers: headers, body: Array(raw.utf8))
        #expect(
            String(decoding: notification.plaintext, as: UTF8.self)
                .hasPrefix("-----BEGIN CERTIFICATE-----\nMIID3DCCAsSgAwIBAgIURfWdTavzGRivzsVW1dLG43ZnXVcw"))
        let reserialised = raw.replacingOccurrences(of: "\\/", with: "/")
        await #expect(throws: WeChatPayError.badSignature) {
            try await parser.parse(headers: headers, body: Array(reserialised.utf8))
        }
    }

    @Test("W7: the Authorization message and header format")
    func authorization() throws {
        #expect(
            MerchantSigner.requestMessage(
                method: "GET", pathAndQuery: "/v3/certificates", timestamp: 1_624_523_846,
                nonce: "A1B2C3D4E5F6G7", body: "")
                == "GET\n/v3/certificates\n1624523846\nA1B2C3D4E5F6G7\n\n")
        #expect(
            MerchantSigner.requestMessage(
                method: "POST", pathAndQuery: "/v3/certificates", timestamp: 1_624_523_846,
                nonce: "A1B2C3D4E5F6G7", body: "Hello World!\n")
                == "POST\n/v3/certificates\n1624523846\nA1B2C3D4E5F6G7\nHello World!\n\n")
        let signer = try MerchantSigner(
            merchantID: "1234567890", certificateSerial: "0123456789ABC",
            privateKey: try Vectors.text("go/test_private_key_pkcs8.pem"))
        let header = try signer.authorization(
            method: "GET", pathAndQuery: "/v3/certificates", timestamp: 1_624_523_846,
            nonce: "A1B2C3D4E5F6G7", body: "")
        #expect(
            header.hasPrefix(
                #"WECHATPAY2-SHA256-RSA2048 mchid="1234567890",nonce_str="A1B2C3D4E5F6G7",timestamp="1624523846",serial_no="0123456789ABC",signature=""#
            ))
        let signature = String(header.split(separator: "signature=\"")[1].dropLast())
        var keys = WeChatPayVerificationKeys()
        try keys.addCertificate(pem: try Vectors.text("go/platform_cert_F5765756002FDD77.pem"))
        #expect(
            SHA256WithRSA.verify(
                signature, over: Array("GET\n/v3/certificates\n1624523846\nA1B2C3D4E5F6G7\n\n".utf8),
                with: try keys.key(serial: "F5765756002FDD77")))
    }

    @Test("C: v2 MD5 and HMAC-SHA256 signatures; empty values are dropped")
    func v2() throws {
        let vectors = try Vectors.json("yansongda/v2_sign_vectors.json")
        let official = vectors["official_v2_example"] as! [String: Any]
        let params = official["params"] as! [String: String]
        let key = official["key"] as! String
        #expect(V2Signature.stringToSign(params, apiKey: key) == official["stringSignTemp"] as? String)
        #expect(V2Signature.sign(params, apiKey: key, algorithm: .md5) == official["MD5"] as? String)
        #expect(V2Signature.sign(params, apiKey: key, algorithm: .hmacSHA256) == official["HMAC-SHA256"] as? String)
        #expect(V2Signature.isValid("9a0a8659f005d6984697e2ca0a9cf3b7", for: params, apiKey: key, algorithm: .md5))
        #expect(!V2Signature.isValid("9A0A8659F005D6984697E2CA0A9CF3B8", for: params, apiKey: key, algorithm: .md5))
        let yansongda = vectors["yansongda_v2"] as! [String: Any]
        #expect(
            V2Signature.sign(["name": "yansongda", "age": "29", "foo": ""], apiKey: "yansongda", algorithm: .md5)
                == yansongda["expected_sign_MD5"] as? String)
    }
}
