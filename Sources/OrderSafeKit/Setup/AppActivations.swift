import Foundation

/// Where OrderSafe hears that the app became active again, so that what a return to the app needs happens without a
/// call from it: a buyer back from Alipay or WeChat Pay without their answer is not left waiting (each bridge's
/// ``PaymentAppBridge/appBecameActive()``), and whatever was on its way is resumed (``OrderSafe/resume()``). Observed from
/// ``OrderSafe/start()`` on, as RevenueCat observes the app's lifecycle itself; ``none`` opts out, and the app calls
/// ``OrderSafe/appBecameActive()`` where it sees the app become active.
public struct AppActivations: Sendable {
    let events: @Sendable () -> AsyncStream<Void>

    /// Activations from `events` (a test's, or the app's own source).
    public init(_ events: @escaping @Sendable () -> AsyncStream<Void>) {
        self.events = events
    }

    /// The platform's "did become active" notification on `NotificationCenter.default`: UIKit's
    /// `UIApplication.didBecomeActiveNotification` on iOS, iPadOS, tvOS and visionOS (posted for SwiftUI apps too, as
    /// their scene phase turns `.active`), AppKit's `NSApplication.didBecomeActiveNotification` on macOS. Named by the
    /// constants' string values, which are their names, so the SDK links neither UIKit nor AppKit for it. None on
    /// watchOS and Linux: there the app calls ``OrderSafe/appBecameActive()``.
    public static var system: AppActivations {
        #if os(iOS) || os(tvOS) || os(visionOS)
        notifications(named: Notification.Name("UIApplicationDidBecomeActiveNotification"))
        #elseif os(macOS)
        notifications(named: Notification.Name("NSApplicationDidBecomeActiveNotification"))
        #else
        none
        #endif
    }

    /// Never: the app says when it became active (``OrderSafe/appBecameActive()``).
    public static let none = AppActivations { AsyncStream { $0.finish() } }

    /// Each posting of `name` to `center`.
    public static func notifications(named name: Notification.Name, center: NotificationCenter = .default)
        -> AppActivations
    {
        let observed = ObservedCenter(center)
        return AppActivations {
            AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
                let observer = observed.center.addObserver(forName: name, object: nil, queue: nil) { _ in
                    continuation.yield()
                }
                let token = ObservedCenter.Token(observer)
                continuation.onTermination = { _ in observed.center.removeObserver(token.observer) }
            }
        }
    }

    /// `NotificationCenter` is thread-safe (Foundation's documentation), not declared `Sendable` everywhere.
    private final class ObservedCenter: @unchecked Sendable {
        let center: NotificationCenter
        init(_ center: NotificationCenter) { self.center = center }

        /// An observer token, only ever handed back to `removeObserver`.
        final class Token: @unchecked Sendable {
            let observer: any NSObjectProtocol
            init(_ observer: any NSObjectProtocol) { self.observer = observer }
        }
    }
}
