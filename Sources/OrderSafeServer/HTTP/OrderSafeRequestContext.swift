import Hummingbird
import Logging

/// Per-request state: Hummingbird's core context plus the authenticated user, if any.
public struct OrderSafeRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    var user: AuthenticatedUser?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
