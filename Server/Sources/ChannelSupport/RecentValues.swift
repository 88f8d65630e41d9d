import Synchronization

/// Values remembered for the keys seen most recently, in bounded memory: two generations of at most `generation`
/// entries each; when the newer one is full it becomes the older, and the older is dropped. What a hot path looks up
/// before doing again what it did for the same key moments ago.
package final class RecentValues<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Generations {
        var newer: [Key: Value] = [:]
        var older: [Key: Value] = [:]
    }

    /// The most entries a generation holds (two are kept).
    package let generation: Int
    private let generations = Mutex(Generations())

    package init(generation: Int) {
        self.generation = max(1, generation)
    }

    /// The value remembered for `key`, if any.
    package func value(for key: Key) -> Value? {
        generations.withLock { $0.newer[key] ?? $0.older[key] }
    }

    /// Remembers `value` for `key`.
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
