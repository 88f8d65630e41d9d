// Benchmarks, apart from the tests: `swift run -c release ordersafe-bench [alipay] [wechatpay]`.
// Each prints its own operations per second beside the baseline it is built on, measured in the same run.
import Foundation

let selected = Set(CommandLine.arguments.dropFirst())
var allMet = true
if selected.isEmpty || selected.contains("alipay") {
    allMet = try await AlipayBenchmark.run() && allMet
}
if selected.isEmpty || selected.contains("wechatpay") {
    allMet = try await WeChatPayBenchmark.run() && allMet
}
exit(allMet ? 0 : 1)
