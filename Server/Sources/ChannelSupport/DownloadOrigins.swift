import Foundation

/// Where a provider's answer may send us to fetch a file (a bill's download address): a URL we did not choose, so it
/// is held to the provider's own hosts before anything is sent. Plain `http` or `https` only (no `http+unix`, no
/// user info), to an origin listed as it is, or over `https` to a subdomain of a listed domain.
public struct DownloadOrigins: Sendable {
    /// A scheme, host and port, as a URL names them (the port made explicit).
    public struct Origin: Hashable, Sendable {
        public var scheme: String
        public var host: String
        public var port: Int

        public init(scheme: String, host: String, port: Int? = nil) {
            self.scheme = scheme.lowercased()
            self.host = host.lowercased()
            self.port = port ?? (self.scheme == "https" ? 443 : 80)
        }

        /// The origin of `url`; nil unless it is an absolute `http` or `https` URL with a host and no user info.
        public init?(url: String) {
            guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
                scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
                components.user == nil, components.password == nil
            else { return nil }
            self.init(scheme: scheme, host: host, port: components.port)
        }
    }

    let origins: Set<Origin>
    let httpsDomains: [String]

    /// `origins`: allowed as they are (the provider's API host, as configured; a download host it documents).
    /// `httpsDomains`: any subdomain of these over https on its default port.
    public init(origins: [Origin], httpsDomains: [String] = []) {
        self.origins = Set(origins)
        self.httpsDomains = httpsDomains.map { $0.lowercased() }
    }

    /// Whether `url` may be fetched.
    public func permit(_ url: String) -> Bool {
        guard let origin = Origin(url: url) else { return false }
        if origins.contains(origin) { return true }
        return origin.scheme == "https" && origin.port == 443
            && httpsDomains.contains { origin.host == $0 || origin.host.hasSuffix("." + $0) }
    }
}

/// A provider's answer larger than the transport reads: final, not worth asking again.
public struct ProviderResponseTooLarge: Error, CustomStringConvertible {
    public var limit: Int

    public init(limit: Int) { self.limit = limit }

    public var description: String { "the answer is larger than \(limit) bytes" }
}
