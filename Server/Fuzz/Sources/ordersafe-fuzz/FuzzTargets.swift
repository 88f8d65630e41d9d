import Alipay
import AppStore
import ChannelSupport
import Crypto
import Dispatch
import Foundation
import OrderSafeModel
import Sandbox
import WeChatPay
import _CryptoExtras

/// One input for the target named by `ORDERSAFE_FUZZ_TARGET` (see ``FuzzTarget``). Every parser that sees outside
/// bytes is driven with them; a trap, a memory error, a leak or a timeout is a finding.
func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzTarget.selected.run(bytes)
    return 0
}

/// libFuzzer's entry point by its name. `main.swift` hands the driver ``fuzzOneInput(_:_:)`` itself; this is for the
/// debug build, where SwiftPM renames an executable's entry point and the linker then pulls in libFuzzer's own `main`
/// too, which names this function.
@_cdecl("LLVMFuzzerTestOneInput")
func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    return fuzzOneInput(data, size)
}

/// The fuzz targets, one per family of parsers.
enum FuzzTarget: String, CaseIterable {
    case json, alipay, wechatpay, jws, receipt, sandbox

    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["ORDERSAFE_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(
                Data("ORDERSAFE_FUZZ_TARGET must be one of: \(allCases.map(\.rawValue).joined(separator: ", "))\n".utf8)
            )
            exit(2)
        }
        return target
    }()

    func run(_ bytes: [UInt8]) {
        switch self {
        case .json: JSONFuzz.run(bytes)
        case .alipay: AlipayFuzz.run(bytes)
        case .wechatpay: blocking { await WeChatPayFuzz.run(bytes) }
        case .jws: blocking { await JWSFuzz.run(bytes) }
        case .receipt: blocking { await ReceiptFuzz.run(bytes) }
        case .sandbox: blocking { await SandboxFuzz.run(bytes) }
        }
    }
}

/// Runs async work to its end from libFuzzer's synchronous callback.
func blocking(_ work: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await work()
        done.signal()
    }
    done.wait()
}

/// An input read as an HTTP-ish message: a first line, `Name: value` header lines, a blank line, then the body.
struct FuzzMessage {
    var firstLine: String
    var headers: [String: String]
    var body: [UInt8]

    init(_ bytes: [UInt8]) {
        let separator: [UInt8] = [0x0A, 0x0A]
        var split = bytes.count
        if bytes.count >= 2 {
            for index in 0..<(bytes.count - 1) where bytes[index] == separator[0] && bytes[index + 1] == separator[1] {
                split = index
                break
            }
        }
        let head = String(decoding: bytes[..<split], as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false)
        firstLine = head.first.map(String.init) ?? ""
        headers = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[String(line[..<colon])] = String(line[line.index(after: colon)...]).trimmingCharacters(
                in: .whitespaces)
        }
        body = split + 2 <= bytes.count ? Array(bytes[(split + 2)...]) : []
    }
}

/// A clock pinned where the fixtures' certificates are valid.
struct PinnedClock: WallClock {
    func now() -> Date { Date(timeIntervalSince1970: 1_795_000_000) }
}
