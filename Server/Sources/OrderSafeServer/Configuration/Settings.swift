import Foundation
import Ledger
import Logging
import OrderSafeModel
import Sandbox

/// Every setting of the server, validated. See the configuration reference in docs/production.md.
public struct Settings: Sendable {
    /// `sandbox` runs on the built-in provider simulators and may mint development credentials;
    /// `production` requires every credential to be configured.
    public enum Environment: String, Sendable, CaseIterable {
        case sandbox, production
    }

    public enum LogFormat: String, Sendable, CaseIterable {
        case text, json
    }

    public enum JWTAlgorithm: String, Sendable, CaseIterable {
        case hs256 = "HS256"
        case es256 = "ES256"
    }

    public struct Server: Sendable {
        public var host: String
        public var port: Int
        public var environment: Environment
        public var dataDirectory: String
        public var logFormat: LogFormat
        public var logLevel: Logger.Level
        public var maxBodyBytes: Int
        /// Seconds a connection may sit without a complete request head (slow headers, idle keep-alive).
        public var idleTimeoutSeconds = 30
        /// Seconds a request body may take to arrive once its head has.
        public var requestTimeoutSeconds = 30
        /// Seconds a graceful shutdown waits for in-flight work before cancelling it.
        public var shutdownSeconds = 20
        /// Take the client's address from the last `X-Forwarded-For` entry (behind a proxy that appends it).
        public var trustForwardedFor = false
        /// Open connections one client address (an IPv6 client's /64) may hold; the idle longest make room for
        /// new ones. 0, or behind a trusted proxy: no per-address cap.
        public var maxConnectionsPerAddress = 256
        /// Open connections in all; 0: what the open-file limit allows.
        public var maxConnections = 0
        /// Sandbox mode on a non-loopback address (`server.allow_public_sandbox`): only for a private test network,
        /// since the built-in simulators mint purchases this server trusts.
        public var allowsPublicSandbox = false
        /// How fast the built-in App Store's subscriptions renew (`server.sandbox_renewal_rate`): a month in five
        /// minutes by default, as Apple's sandbox.
        public var sandboxRenewalRate = SandboxRenewalRate.monthlyEveryFiveMinutes
        /// What each channel's built-in simulator is told (``PaymentChannel/simulatorSettings(from:)``), by channel.
        public var simulatorSettings: [Channel: any Sendable] = [:]

        /// Whether `host` is a loopback address, reachable from this machine only: `localhost`, `::1`, or an IPv4
        /// address in 127.0.0.0/8 written as four decimal octets (a name such as `127.attacker.example` is not one).
        public var isLoopback: Bool {
            let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            if bare == "localhost" || bare == "::1" { return true }
            let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
            return octets.count == 4 && octets.first == "127"
                && octets.allSatisfy {
                    (1...3).contains($0.count) && $0.allSatisfy { $0.isASCII && $0.isNumber } && UInt8($0) != nil
                }
        }
    }

    public struct Database: Sendable {
        public var url: DatabaseURL
        public var poolSize: Int
    }

    public struct Catalog: Sendable {
        /// Path of the catalog JSON file; nil means the bundled example catalog.
        public var file: String?
    }

    public struct Auth: Sendable {
        public var jwtAlgorithm: JWTAlgorithm
        /// The HS256 shared secret (at least 32 bytes), when `jwtAlgorithm` is HS256.
        public var jwtSecret: String?
        /// The ES256 public key (PEM), when `jwtAlgorithm` is ES256.
        public var jwtPublicKeyPEM: String?
        /// Required `iss` claim, if set.
        public var jwtIssuer: String?
        /// Required `aud` claim, if set.
        public var jwtAudience: String?
        /// The key for `/v1/admin/…` (at least 32 characters).
        public var adminKey: String
        /// The longest a user token may live, from its `iat` (or now) to its `exp`.
        public var maxTokenLifetimeSeconds = 24 * 3600
    }

    /// The background reconciliation worker.
    public struct Reconcile: Sendable {
        /// Seconds between polls of the job queue when it is empty; 0 runs no worker in this process.
        public var intervalSeconds: Int
        /// Seconds after creation of the first provider query of an Alipay or WeChat Pay order.
        public var firstQuerySeconds: Int
        /// The hour of the provider's day (Beijing for Alipay and WeChat Pay) from which yesterday's statement is
        /// fetched and checked, tried again every half hour until it is published.
        public var statementHour = 10
    }

    /// Scheduled backups of an SQLite ledger in a file (`ordersafe backup` makes one by hand).
    public struct Backup: Sendable {
        /// Seconds between backups; 0 schedules none.
        public var everySeconds = 3600
        /// How many scheduled backups are kept; older ones go.
        public var keep = 48
        /// Where scheduled backups are written.
        public var directory: String
    }

    /// Request rates per caller: token buckets that answer 429 with `Retry-After` when empty. 0 turns one off.
    public struct Limits: Sendable {
        /// Requests a minute from one client address: every route but a signed-in user's (carrier-grade NAT puts
        /// thousands of phones behind one address; they are limited each by ``perUserPerMinute``).
        public var perAddressPerMinute = 3000
        /// Requests a minute from one signed-in user (the user routes).
        public var perUserPerMinute = 300
        /// Unpaid orders from the last day one user may hold; 0: no limit.
        public var unpaidOrdersPerUser = 30
    }

    /// The merchant's backend, which receives every order state change.
    public struct Webhooks: Sendable {
        public var url: String
        /// The HMAC-SHA256 key of the `OrderSafe-Signature` header (at least 32 characters).
        public var secret: String
    }

    /// The merchant's backend, asked before an offer whose rule says `ask_merchant` is signed (``MerchantOfferHook``).
    public struct OfferHook: Sendable {
        public var url: String
        /// The HMAC-SHA256 key of the `OrderSafe-Signature` header (at least 32 characters).
        public var secret: String
        /// How long it may take to answer; no answer in time is no offer.
        public var timeoutMilliseconds: Int
    }

    /// The operator console under `/admin`.
    public struct Console: Sendable {
        /// Named operator keys (`auth.operator_keys`, `name=key,…`), besides the admin key, which signs in as `admin`.
        public var operatorKeys: [String: String] = [:]
        /// Minutes a session may sit unused before it ends.
        public var idleMinutes = 30
        /// Hours a session may last however busy it is; then the operator signs in again.
        public var sessionHours = 12
        /// Mark the session cookie `Secure` (HTTPS only); off by default in the sandbox, for plain-HTTP development.
        public var secureCookie = true
        /// Failed sign-ins a minute from one client address.
        public var signInAttemptsPerMinute = 10
        /// The time zone pages use until the operator's browser says its own.
        public var defaultTimeZone = "Asia/Shanghai"
    }

    public var server: Server
    public var database: Database
    public var catalog: Catalog
    public var auth: Auth
    /// Each channel's account, by channel (a channel's folder under Channels/ gives its section a name of its own:
    /// `settings.alipay`).
    public var channels: [Channel: any ChannelSettings] = [:]
    /// The channels this server is built with (not configuration: which of them run is `channels` and the sandbox).
    var registry = ChannelRegistry.builtIn
    public var reconcile = Reconcile(intervalSeconds: 2, firstQuerySeconds: 60)
    public var webhooks: Webhooks?
    public var offerHook: OfferHook?
    public var limits = Limits()
    public var console = Console()
    /// As loaded (its folder defaults to the data folder's `backups`); nil schedules none.
    public var backup: Backup?
    /// `recovery.key` (at least 32 characters): App Store order tokens carry a tag of their user under it
    /// (`AccountTokenTag`), so a restored ledger that lost an order still knows whose its transaction is. Keep it
    /// where the backups' secrets are, not only in the data folder. In the sandbox one is made in the data folder.
    public var recoveryKey: String?
}
