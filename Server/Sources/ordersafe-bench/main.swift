// Benchmarks, apart from the tests: `swift run -c release ordersafe-bench [alipay] [wechatpay] [appstore [--export DIR]]`,
// or `ordersafe-bench console --database URL --catalog FILE [--orders N]` (the console's lists at scale), or
// `ordersafe-bench writes [--database URL] [--submissions N] [--concurrency C]` (the ledger's write path per group size),
// or `ordersafe-bench statements [--lines N] [--channel alipay]` (a day's WeChat Pay bill parsed and compared with the
// ledger; Alipay's zipped GBK bill read), or `ordersafe-bench appstore-day [--users N]` (the App Store's statement day:
// histories asked and the ledger's query naming them, at 10k/100k/1M customers), or `ordersafe-bench bytes` (a signed
// transaction's text scanned, compared and decoded, beside the byte-by-byte and Foundation ways), or
// `ordersafe-bench roundtrips --database postgres://…` (a PostgreSQL round trip's CPU through postgres-nio and the ledger).
// Each prints its own operations per second beside the baseline it is built on, measured in the same run.
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "console" {
    exit(try await ConsoleBenchmark.run(Array(arguments.dropFirst())) ? 0 : 1)
}
if arguments.first == "statements" {
    exit(try await StatementBenchmark.run(Array(arguments.dropFirst())) ? 0 : 1)
}
if arguments.first == "statements-day" {  // the process `statements` measures the day in
    exit(try await StatementBenchmark.measureDay(Array(arguments.dropFirst())) ? 0 : 1)
}
if arguments.first == "appstore-day" {
    exit(try await AppStoreDayBenchmark.run(Array(arguments.dropFirst())) ? 0 : 1)
}
if arguments.first == "bytes" {
    exit(try await BytesBenchmark.run() ? 0 : 1)
}
if arguments.first == "roundtrips" {
    exit(try await RoundTripBenchmark.run(Array(arguments.dropFirst())) ? 0 : 1)
}
if arguments.first == "writes" {
    exit(try await WritePathBenchmark.run(Array(arguments.dropFirst())) ? 0 : 1)
}
var export: String?
if let flag = arguments.firstIndex(of: "--export"), flag + 1 < arguments.count {
    export = arguments[flag + 1]
    arguments.removeSubrange(flag...(flag + 1))
}
let selected = Set(arguments)
var allMet = true
if selected.isEmpty || selected.contains("alipay") {
    allMet = try await AlipayBenchmark.run() && allMet
}
if selected.isEmpty || selected.contains("wechatpay") {
    allMet = try await WeChatPayBenchmark.run() && allMet
}
if selected.isEmpty || selected.contains("appstore") {
    allMet = try await AppStoreBenchmark.run(export: export) && allMet
}
exit(allMet ? 0 : 1)
