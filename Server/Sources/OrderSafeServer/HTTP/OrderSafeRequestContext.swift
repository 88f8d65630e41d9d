import Hummingbird
import Logging
import NIOCore

/// Per-request state: Hummingbird's core context plus the authenticated user, if any, and the client's address.
public struct OrderSafeRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    var user: AuthenticatedUser?
    /// The operator behind an admin request (`admin`, or a named operator key's name).
    var operatorName: String?
    /// The peer's IP address as the connection shows it; ``ForwardedForMiddleware`` may replace it with the
    /// proxy's word. Read from the connection only when asked for: a signed-in request never asks, and the address's
    /// text cost a lock, a copy and `inet_ntop` at every request (0.2% of a submission's samples).
    var clientAddress: String? {
        get { givenAddress ?? channel.remoteAddress?.ipAddress }
        set { givenAddress = newValue }
    }
    private var givenAddress: String?
    /// The connection the request came on.
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

extension OrderSafeRequestContext {
    /// The path parameter `name` as the client meant it, percent-decoded (`a%3Cb%3Ec` is `a<b>c`, `%E5%BC%A0%E4%B8%89`
    /// is `张三`): the router hands parameters over as they were written in the path. Nil when it is missing or an
    /// escape is malformed.
    func decodedParameter(_ name: String) -> String? {
        parameters.get(name)?.removingPercentEncoding
    }
}
