import Crypto
import Foundation

/// The keys that sign an operator in: the admin key (operator `admin`) and the named operator keys. Every key is
/// compared by its SHA-256 digest, all of them each time, so the time taken says nothing about which was close.
struct OperatorKeys: Sendable {
    private let digests: [(name: String, digest: [UInt8])]

    init(adminKey: String, operatorKeys: [String: String]) {
        var digests: [(String, [UInt8])] = []
        if !adminKey.isEmpty { digests.append(("admin", Array(SHA256.hash(data: Data(adminKey.utf8))))) }
        for (name, key) in operatorKeys.sorted(by: { $0.key < $1.key }) {
            digests.append((name, Array(SHA256.hash(data: Data(key.utf8)))))
        }
        self.digests = digests
    }

    /// The operator named by a `Bearer` key (the admin API), or ``AuthError/invalidAdminKey``.
    func authenticate(authorization: String?) throws(AuthError) -> String {
        guard let authorization, authorization.prefix(7).lowercased() == "bearer ",
            let name = operatorName(forKey: String(authorization.dropFirst(7)))
        else { throw .invalidAdminKey }
        return name
    }

    /// The operator a key belongs to, or nil.
    func operatorName(forKey key: String) -> String? {
        let offered = Array(SHA256.hash(data: Data(key.utf8)))
        var found: String?
        for (name, digest) in digests where ConsoleSessions.same(offered, digest) { found = name }
        return found
    }
}
