import Synchronization

/// Values remembered for the keys seen most recently, in bounded memory: two generations of at most `generation`
/// entries each; when the newer one is full it becomes the older, and the older is dropped. What a hot path looks up
/// before doing again what it did for the same key moments ago.
///
/// Its lookups are inlinable, so that each caller's module specializes them for its key and value: unspecialized, a
/// fresh App Store submission's three lookups and remembrances asked the runtime for the generations' metadata and
/// hashed through witness tables (about 3,000 instructions of it).
package final class RecentValues<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline
    struct Generations {
        @usableFromInline var newer: [Key: Value] = [:]
        @usableFromInline var older: [Key: Value] = [:]

        @usableFromInline init() {}
    }

    /// The most entries a generation holds (two are kept).
    package let generation: Int
    @usableFromInline let generations = Mutex(Generations())

    package init(generation: Int) {
        self.generation = max(1, generation)
    }

    /// The value remembered for `key`, if any.
    @inlinable
    package func value(for key: Key) -> Value? {
        generations.withLock { $0.newer[key] ?? $0.older[key] }
    }

    /// Remembers `value` for `key`.
    @inlinable
    package func remember(_ key: Key, _ value: Value) {
        generations.withLock { generations in
            if generations.newer.count >= generation {
                generations.older = generations.newer
                generations.newer = [:]
            }
            generations.newer[key] = value
        }
    }
}
