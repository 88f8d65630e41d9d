import Foundation

/// Why a call to the OrderSafe server did not give an answer to act on. ``isRetryable`` decides whether a
/// StoreKit transaction may be finished: only a definitive answer finishes one.
public enum ServerProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// No answer: offline, DNS, timeout, connection reset.
    case unreachable(String)
    /// The server answered 5xx or 429: try again later.
    case unavailable(status: Int, code: String)
    /// The server refused the request for good (4xx other than 429), with its error code and message.
    case refused(status: Int, code: String, message: String)
    /// The answer could not be read.
    case malformedAnswer(String)
    /// No bearer token, or nobody signed in (``OrderSafe/logIn(_:)``).
    case signedOut
    /// The server answered for another user than the one signed in: the app's token and ``OrderSafe/logIn(_:)``
    /// disagree. Nothing of that answer is shown.
    case tokenOfAnotherUser
    /// Another user signed in (or the user signed out) while it was asked: nothing of the answer is shown. Ask again.
    case userChanged

    public var isRetryable: Bool {
        switch self {
        case .unreachable, .unavailable, .malformedAnswer, .signedOut, .userChanged: true
        case .refused, .tokenOfAnotherUser: false
        }
    }

    /// The server could not verify an App Store transaction with its own settings and holds it until an operator
    /// fixes them (503 `transaction_held`): keep it unfinished, and ask again after a while.
    public var isHeld: Bool {
        if case .unavailable(503, "transaction_held") = self { true } else { false }
    }

    /// The server does not show the signed-in user what was asked for (404): another user's order, or none.
    public var isNotFound: Bool {
        if case .refused(404, _, _) = self { true } else { false }
    }

    public var description: String {
        switch self {
        case .unreachable(let reason): "the server could not be reached (\(reason))"
        case .unavailable(let status, let code): "the server is unavailable (\(status) \(code))"
        case .refused(let status, let code, let message): "the server refused (\(status) \(code)): \(message)"
        case .malformedAnswer(let reason): "the server's answer could not be read (\(reason))"
        case .signedOut: "no user is signed in"
        case .tokenOfAnotherUser: "the token belongs to another user than the one signed in"
        case .userChanged: "another user signed in while this was asked"
        }
    }
}
