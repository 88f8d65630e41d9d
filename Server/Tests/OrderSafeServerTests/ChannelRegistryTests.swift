import Foundation
import OrderSafeModel
import Testing

@testable import OrderSafeServer

/// A channel is its folder under `Channels/` and one line of ``ChannelRegistry`` (and, in the SDK, a folder under
/// `Bridges/` and one line of `ProviderPayments`): every wire channel is registered once, and no other file of the
/// server's modules or the SDK names two channels (which is how a hand-written list of them starts).
@Suite struct ChannelRegistryTests {
    @Test func everyWireChannelIsRegisteredOnce() {
        let registered = ChannelRegistry.builtIn.all.map { $0.channel }
        #expect(
            registered.sorted { $0.rawValue < $1.rawValue } == Channel.builtIn.sorted { $0.rawValue < $1.rawValue })
        #expect(Set(ChannelRegistry.builtIn.all.map { $0.accountKey }).count == registered.count)
        #expect(Set(ChannelRegistry.builtIn.all.map { $0.notificationRoute }).count == registered.count)
        #expect(Set(ChannelRegistry.builtIn.all.map { $0.label.colour }).count == registered.count)
    }

    /// The server's modules and the client SDK (the simulated phone and the benchmarks are apps of their own).
    static let modules = [
        "ChannelSupport", "Engine", "Ledger", "OrderSafeModel", "OrderSafeServer", "Sandbox", "ordersafe",
        "OrderSafeKit",
    ]

    /// Files that name every channel on purpose, and why.
    static let allowed: [String: String] = [
        "OrderSafeServer/Channels/ChannelRegistry.swift": "the one list",
        "OrderSafeModel/Channel.swift": "the wire format's channel names",
        "OrderSafeModel/API/OrderResponse.swift": "the wire format: each channel's invocation member",
        "Ledger/Migrations/Schema.swift": "history: the names the first migrations admitted",
        "OrderSafeServer/Demo/OrderSafeDemo.swift": "a narrated walk through each channel; it wires none",
        "OrderSafeKit/Bridges/ProviderPayment.swift": "the SDK's list of the providers it opens",
        "OrderSafeKit/Setup/OrderSafeConfiguration.swift":
            "the public configuration: the app's bridge to each provider",
        "OrderSafeKit/Messages/OrderSafeError.swift": "the public errors apps switch on: each provider's own answer",
    ]

    @Test func onlyChannelFoldersNameChannels() throws {
        // The server package is Server/ in the repository; the SDK's is the repository's root.
        let server = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var offenders: [String] = []
        var scanned = 0
        for module in Self.modules {
            let package =
                ["OrderSafeKit", "OrderSafeModel"].contains(module) ? server.deletingLastPathComponent() : server
            let root = package.appendingPathComponent("Sources").appendingPathComponent(module)
            let files = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }
            for file in files where file.hasSuffix(".swift") {
                let path = "\(module)/\(file)"
                guard !Self.isChannelFolder(path), Self.allowed[path] == nil else { continue }
                scanned += 1
                let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                let named = Self.channelsNamed(in: text)
                if named.count > 1 {
                    offenders.append("\(path) names \(named.map(\.rawValue).sorted().joined(separator: ", "))")
                }
            }
        }
        #expect(scanned > 100)
        #expect(offenders == [], "move channel-specific code into its folder under Channels/, or ask the registry")
    }

    /// The server's modules (the SDK and the wire model are StoreKit-shaped by design: their rule is the one above).
    static let serverModules = ["ChannelSupport", "Engine", "Ledger", "OrderSafeServer", "Sandbox", "ordersafe"]

    /// Server files outside a channel's folders that still name one channel, and why. The list only shrinks: a new
    /// file naming one channel fails (put it in the channel's folder, or behind a `PaymentChannel` hook), and a file
    /// that stops naming one must leave the list.
    static let namingOne: [String: String] = [
        "Ledger/Store/SQLLedger.swift": "the catalog's app_store_product_id column",
        "ordersafe/OrderSafeCommand.swift": "the command list names `ordersafe appstore` (the CLI's one list)",
    ]

    @Test func serverFilesNamingOneChannelOnlyShrink() throws {
        let server = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var naming: Set<String> = []
        for module in Self.serverModules {
            let root = server.appendingPathComponent("Sources").appendingPathComponent(module)
            let files = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }
            for file in files where file.hasSuffix(".swift") {
                let path = "\(module)/\(file)"
                guard !Self.isChannelFolder(path), Self.allowed[path] == nil else { continue }
                let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                if Self.channelsNamed(in: text).count == 1 { naming.insert(path) }
            }
        }
        #expect(naming.subtracting(Self.namingOne.keys).sorted() == [], "new: move it into the channel's folder")
        #expect(Set(Self.namingOne.keys).subtracting(naming).sorted() == [], "names no single channel now: drop it")
    }

    /// The scan sees names in code, whatever their case or spelling, and not in comments.
    @Test func theScanSeesCodeNotComments() {
        #expect(Self.channelsNamed(in: "switch c {\ncase .alipay: 1\ncase .wechatPay: 2\n}") == [.alipay, .wechatPay])
        #expect(Self.channelsNamed(in: "let a: AppStorePayments\nlet key = \"app_store\"") == [.appStore])
        #expect(Self.channelsNamed(in: "/// Alipay, WeChat Pay and the App Store\nlet x = 1 // alipay") == [])
        #expect(Self.isChannelFolder("OrderSafeServer/Channels/Alipay/AlipayChannel.swift"))
        #expect(Self.isChannelFolder("Engine/WeChatPay/WeChatPayPayments.swift"))
        #expect(!Self.isChannelFolder("Engine/Reconciliation/Reconciler.swift"))
    }

    /// A folder of one channel: named as its registered type is, without `Channel` (`Channels/Alipay/`, `Engine/Alipay/`).
    static func isChannelFolder(_ path: String) -> Bool {
        let folders = Set(
            ChannelRegistry.builtIn.all.map { String(describing: $0).replacingOccurrences(of: "Channel", with: "") })
        return path.split(separator: "/").dropLast().contains { folders.contains(String($0)) }
    }

    /// The channels `text` names outside comments: a channel's wire name or folder name, in any case, with or
    /// without underscores and spaces (`wechatPay`, `WeChatPayPayments`, `app_store`, "App Store").
    static func channelsNamed(in text: String) -> Set<Channel> {
        let names = ChannelRegistry.builtIn.all.map { type in
            (
                type.channel,
                [type.channel.rawValue, String(describing: type).replacingOccurrences(of: "Channel", with: "")]
                    .map { $0.lowercased() }
            )
        }
        var found: Set<Channel> = []
        for line in text.split(separator: "\n") {
            let code = line.components(separatedBy: "//")[0].lowercased()
                .replacingOccurrences(of: "_", with: "").replacingOccurrences(of: " ", with: "")
            for (channel, spellings) in names where spellings.contains(where: code.contains) { found.insert(channel) }
        }
        return found
    }
}
