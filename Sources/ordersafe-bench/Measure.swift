import Foundation

/// Runs `body` repeatedly on the calling thread for about `seconds` and returns operations per second.
/// A short warm-up runs first; the best of three rounds is reported, so a busy neighbour skews it less.
func operationsPerSecond(seconds: Double = 1.0, _ body: () throws -> Void) rethrows -> Double {
    for _ in 0..<200 { try body() }
    var best = 0.0
    for _ in 0..<3 {
        var count = 0
        let start = DispatchTime.now().uptimeNanoseconds
        var elapsed: UInt64 = 0
        while elapsed < UInt64(seconds * 1e9 / 3) {
            for _ in 0..<100 { try body() }
            count += 100
            elapsed = DispatchTime.now().uptimeNanoseconds - start
        }
        best = max(best, Double(count) / (Double(elapsed) / 1e9))
    }
    return best
}

func report(_ name: String, _ value: Double, unit: String = "ops/s") {
    print(String(format: "%-52@ %12.0f %@", name as NSString, value, unit))
}
