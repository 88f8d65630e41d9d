import Alipay
import CMalloc
import ChannelSupport
import Engine
import Foundation
import Sandbox

/// A day's Alipay trade bill of `--lines` payments, as Alipay serves it (a zip of GBK CSV files), read through to its
/// end into a statement that keeps it zipped: time and peak memory, beside the primitive under it measured in the same run (inflating the detail
/// file and discarding it). The comparison with the ledger that follows is the same for every channel
/// (``StatementBenchmark``).
///
/// `ordersafe-bench statements --channel alipay [--lines N]`
enum AlipayBillBenchmark {
    static func run(lines: Int) throws -> Bool {
        let day = StatementDay("2026-11-25")!
        print("Alipay bill of \(lines) payments (one core, release build)")
        let start = ContinuousClock.now
        let zip = self.zip(lines: lines)
        print(
            String(
                format: "  the zip: %.1f MB written in %.1f s", Double(zip.count) / 1e6,
                StatementBenchmark.seconds(since: start)))
        // The zip's making (the whole text, then its GBK) is over: its memory handed back, the peak counted afresh.
        malloc_trim(0)
        resetPeakMemory()
        let memoryBefore = memoryMB("VmRSS")

        let parseStart = ContinuousClock.now
        let statement = try AlipayPayments.statement(zip: zip, day: day, sellerID: "2088000000000001")
        let parse = StatementBenchmark.seconds(since: parseStart)
        let memoryPeak = memoryMB("VmHWM")
        guard statement.entries.count == lines else {
            print("  the parser read \(statement.entries.count) of \(lines) rows")
            return false
        }
        let inflateStart = ContinuousClock.now
        let archive = try ZipArchive(zip)
        var inflated = 0
        for entry in archive.entries {
            var reader = try archive.reader(of: entry, maxBytes: 1 << 32)
            while let piece = try reader.next() { inflated += piece.count }
        }
        let inflate = StatementBenchmark.seconds(since: inflateStart)
        print(String(format: "  inflated: %.1f MB", Double(inflated) / 1e6))
        report("inflate the zip's files (read and discarded)", Double(lines) / inflate, unit: "lines/s")
        report(
            "unzip, decode GBK, parse and check (rows, footer, summary) a row at a time", Double(lines) / parse,
            unit: "lines/s")
        print(
            String(
                format:
                    "  ratio to the inflate alone: %.3f; resident memory %.0f MB before the read, peak %.0f MB during it",
                inflate / parse, memoryBefore, memoryPeak))
        return true
    }

    /// The day's bill: `lines` payments of 99.00 (fee 0.59), the footer, the summary; GBK, zipped as Alipay does.
    static func zip(lines: Int) -> [UInt8] {
        let rule = "#" + String(repeating: "-", count: 41)
        var text =
            [
                "#支付宝业务明细查询", "#账号：[20880000000000010156]",
                "#起始日期：[2026年11月25日 00:00:00]   终止日期：[2026年11月26日 00:00:00]", rule + "业务明细列表" + rule,
                SandboxAlipay.billHeader,
            ].joined(separator: "\r\n") + "\r\n"
        text.reserveCapacity(lines * 230)
        for index in 0..<lines {
            let second = index % 86400
            let time = String(format: "2026-11-25 %02d:%02d:%02d", second / 3600, second / 60 % 60, second % 60)
            text += "TXBN\(index + 1)\t,BN\(index + 1)\t,交易\t,礼盒 Gift box,\(time),\(time),\t,\t,\t,\t,*沙(0001)\t,"
            text += "99.00,99.00,0.00,0.00,0.00,0.00,0.00,,0.00\t,0.00,\t,0.59,0.00,礼盒 Gift box\r\n"
        }
        let yuan = { (fen: Int) in String(format: "%d.%02d", fen / 100, fen % 100) }
        text +=
            [
                rule + "业务明细列表结束" + rule, "#交易合计：\(lines)笔，商家实收共\(yuan(lines * 9900))元，商家优惠共0.00元",
                "#退款合计：0笔，商家实收退款共0.00元，商家优惠退款共0.00元", "#导出时间：[2026年11月26日 05:46:49]",
            ].joined(separator: "\r\n") + "\r\n"
        let summary =
            [
                SandboxAlipay.billSummaryHeader,
                "合计,,\(lines),0,\(yuan(lines * 9900)),\(yuan(lines * 9900)),0.00,0.00,0.00,\(yuan(lines * 59)),0.00,\(yuan(lines * 9841))",
            ].joined(separator: "\r\n") + "\r\n"
        let gbk = { (text: String) in Array(text.data(using: AlipayBillArchive.encoding)!) }
        var writer = ZipArchiveWriter(utf8Names: false)
        writer.add(name: gbk("20880000000000010156_20261125_业务明细.csv"), contents: gbk(text))
        writer.add(name: gbk("20880000000000010156_20261125_业务明细(汇总).csv"), contents: gbk(summary))
        return writer.finished()
    }

    /// Starts the kernel's count of peak resident memory (VmHWM) again from now (`/proc/self/clear_refs`, 5).
    static func resetPeakMemory() {
        try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
    }

    /// A memory line of `/proc/self/status` (`VmRSS`, `VmHWM`), in MB.
    static func memoryMB(_ field: String) -> Double {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Double(line.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
    }
}
