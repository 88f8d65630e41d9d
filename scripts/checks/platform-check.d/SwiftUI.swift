// SwiftUI's names the paywall sample (Examples/PaywallSample) uses, for scripts/checks/platform-check to type-check it
// on Linux, where SwiftUI does not exist. Shapes as SwiftUI declares them (a `View` with a `@ViewBuilder` body, the
// builder's blocks, `@StateObject` taking an `ObservableObject`, `@State`, `@MainActor` views); no behaviour.
import Combine

@MainActor @preconcurrency
public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor var body: Body { get }
}

extension Never: View {
    nonisolated public var body: Never { fatalError() }
}

public struct EmptyView: View {
    nonisolated public init() {}
    nonisolated public var body: Never { fatalError() }
}

public struct TupleView<T>: View {
    nonisolated public init(_ value: T) {}
    nonisolated public var body: Never { fatalError() }
}

extension Optional: View where Wrapped: View {
    nonisolated public var body: Never { fatalError() }
}

public struct ConditionalContent<TrueContent: View, FalseContent: View>: View {
    nonisolated public init() {}
    nonisolated public var body: Never { fatalError() }
}

@resultBuilder
public enum ViewBuilder {
    public static func buildBlock() -> EmptyView { EmptyView() }
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<(repeat each Content)> {
        TupleView((repeat each content))
    }
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    public static func buildOptional<Content: View>(_ content: Content?) -> Content? { content }
    public static func buildEither<T: View, F: View>(first: T) -> ConditionalContent<T, F> { ConditionalContent() }
    public static func buildEither<T: View, F: View>(second: F) -> ConditionalContent<T, F> { ConditionalContent() }
}

public struct Text: View {
    nonisolated public init(_ content: String) {}
    nonisolated public var body: Never { fatalError() }
    nonisolated public func font(_ font: Font?) -> Text { self }
}

public struct Font: Sendable {
    public static let headline = Font()
    public static let subheadline = Font()
    public static let footnote = Font()
}

public struct Button<Label: View>: View {
    nonisolated public var body: Never { fatalError() }
}

extension Button where Label == Text {
    nonisolated public init(_ title: String, action: @escaping @MainActor () -> Void) {}
}

public enum HorizontalAlignment: Sendable {
    case leading, center, trailing
}

public struct VStack<Content: View>: View {
    nonisolated public init(
        alignment: HorizontalAlignment = .center, spacing: Double? = nil, @ViewBuilder content: () -> Content
    ) {}
    nonisolated public var body: Never { fatalError() }
}

public struct List<Content: View>: View {
    nonisolated public init(@ViewBuilder content: () -> Content) {}
    nonisolated public var body: Never { fatalError() }
}

public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content: View>: View {
    nonisolated public var body: Never { fatalError() }
}

extension ForEach where Data.Element: Identifiable, ID == Data.Element.ID {
    nonisolated public init(_ data: Data, @ViewBuilder content: @escaping (Data.Element) -> Content) {}
}

extension ForEach {
    nonisolated public init(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content)
    {}
}

public struct ModifiedContent<Content: View>: View {
    nonisolated public init() {}
    nonisolated public var body: Never { fatalError() }
}

extension View {
    nonisolated public func font(_ font: Font?) -> ModifiedContent<Self> { ModifiedContent() }
    nonisolated public func disabled(_ disabled: Bool) -> ModifiedContent<Self> { ModifiedContent() }
    nonisolated public func task(
        priority: TaskPriority = .userInitiated, @_inheritActorContext _ action: @escaping @Sendable () async -> Void
    )
        -> ModifiedContent<Self>
    { ModifiedContent() }
}

@propertyWrapper @MainActor @preconcurrency
public struct StateObject<ObjectType: ObservableObject> {
    nonisolated public init(wrappedValue thunk: @autoclosure @escaping () -> ObjectType) {}
    public var wrappedValue: ObjectType { fatalError() }
}

@propertyWrapper
public struct State<Value> {
    nonisolated public init(initialValue value: Value) {}
    nonisolated public init(wrappedValue value: Value) {}
    public var wrappedValue: Value {
        get { fatalError() }
        nonmutating set {}
    }
}
