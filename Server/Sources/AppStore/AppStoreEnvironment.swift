/// Where signed data comes from: the App Store (`Production`), the sandbox, or StoreKit testing (`Xcode`,
/// `LocalTesting`), spelled as Apple spells them in payloads.
public enum AppStoreEnvironment: String, Sendable, Hashable, CaseIterable, Codable {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"

    /// StoreKit testing: data signed by Xcode or by nobody, never trusted outside a developer's machine.
    public var isLocal: Bool { self == .xcode || self == .localTesting }
}
