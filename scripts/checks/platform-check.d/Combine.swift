// Combine's names that OrderSafeKit's `ObservableObject` model uses, for scripts/checks/platform-check to type-check
// it on Linux (where Combine does not exist, so `#if canImport(Combine)` is false in every other build). Shapes as
// Combine declares them: `ObservableObject` a class protocol, `@Published` a property wrapper.
public protocol ObservableObject: AnyObject {}

@propertyWrapper
public struct Published<Value> {
    public var wrappedValue: Value

    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }
}
