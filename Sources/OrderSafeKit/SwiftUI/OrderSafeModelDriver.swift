import OrderSafeModel

/// The one implementation behind ``OrderSafeViewModel`` and `OrderSafeObservableModel`: each holds an
/// ``OrderSafeModelState`` (observed its own way) and forwards its actions here.
@MainActor
protocol OrderSafeModelDriver: AnyObject {
    var orderSafe: OrderSafe { get }
    var state: OrderSafeModelState { get set }
}

extension OrderSafeModelDriver {
    /// Applies every event after the snapshot the model started from, until the task is cancelled.
    func following(_ events: AsyncStream<OrderSafeEvent>) -> Task<Void, Never> {
        Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.state.apply(event)
            }
        }
    }

    /// Runs `body`, a purchase of `productID`, with the product marked as being bought until it returns.
    func buying(_ productID: String, _ body: () async -> PurchaseOutcome) async -> PurchaseOutcome {
        let user = state.snapshot.userID
        state.began(productID)
        let outcome = await body()
        state.ended(productID, of: user)
        if outcome.state == .fulfilled, state.paywall != nil, state.snapshot.userID == user {
            _ = try? await loadingPaywall()
        }
        return outcome
    }

    /// Loads the paywall into the state, unless another user signed in meanwhile.
    func loadingPaywall() async throws(OrderSafeError) -> Paywall {
        let user = state.snapshot.userID
        let paywall = try await orderSafe.paywall()
        if state.snapshot.userID == user { state.paywall = paywall }
        return paywall
    }

    func restoring() async throws(OrderSafeError) -> RestoreResult {
        let user = state.snapshot.userID
        state.isRestoring = true
        defer { if state.snapshot.userID == user { state.isRestoring = false } }
        let result = try await orderSafe.restore()
        if state.snapshot.userID == user { state.lastRestore = result }
        return result
    }

    func signingIn(_ userID: String) async -> [PurchaseOutcome] {
        state.isSigningIn = true
        defer { state.isSigningIn = false }
        return await orderSafe.logIn(userID)
    }
}
