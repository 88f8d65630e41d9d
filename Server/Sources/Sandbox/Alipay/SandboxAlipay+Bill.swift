import Alipay
import ChannelSupport
import Foundation

extension SandboxAlipay {
    /// The detail header of Alipay's trade bill, every column as merchants receive it.
    public static let billHeader =
        "支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,对方账户,订单金额（元）,商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,商家优惠（元）,券核销金额（元）,券名称,商家红包消费金额（元）,卡消费金额（元）,退款批次号/请求号,服务费（元）,分润（元）,备注"
    /// The summary header of Alipay's trade bill.
    public static let billSummaryHeader =
        "门店编号,门店名称,交易订单总笔数,退款订单总笔数,订单金额（元）,商家实收（元）,支付宝优惠（元）,商家优惠（元）,卡消费金额（元）,服务费（元）,分润（元）,实收净额（元）"

    /// What a trade's query answers: `WAIT_BUYER_PAY` while a query lag hides a recent payment.
    func queriedStatus(of trade: SandboxAlipayTrade) -> AlipayTradeStatus {
        guard queryLag > 0, trade.status.isPaid, let paid = trade.paidAt.flatMap(BeijingTime.date),
            clock.now().timeIntervalSince(paid) < queryLag
        else { return trade.status }
        return .waitBuyerPay
    }

    /// `alipay.data.dataservice.bill.downloadurl.query`: a `trade` bill of a past day (Alipay writes a day's bill by
    /// 09:00 the next day; before, and for a day without a trade or refund, it answers `isp.bill_not_exist`), as a
    /// short-lived download URL shaped like Alipay's (`downloadBillFile.resource?…&downloadFileName=…csv.zip`).
    func billDownloadURL(type: String, date: String) -> String {
        guard type == "trade" else {
            return Self.errorJSON("40004", "Business Failed", "isp.bill_type_not_support", "账单类型不支持")
        }
        guard date.utf8.count == 10, BeijingTime.date(date + " 00:00:00") != nil else {
            return Self.errorJSON("40002", "Invalid Arguments", "isv.invalid-arguments", "bill_date 格式错误")
        }
        let published = BeijingTime.string(clock.now().addingTimeInterval(billsAtOnce ? 0 : -33 * 3600)).prefix(10)
        guard date <= published, !billRows(date: date).isEmpty else {
            return Self.errorJSON("40004", "Business Failed", "isp.bill_not_exist", "账单不存在")
        }
        let compact = date.replacingOccurrences(of: "-", with: "")
        let query =
            "bizType=trade&fileType=csv.zip&bizDates=\(compact)&downloadFileName=\(sellerID)0156_\(compact).csv.zip"
        return Self.json([
            "code": "10000", "msg": "Success",
            "bill_download_url": "\(downloadBase)downloadBillFile.resource?\(query)",
        ])
    }

    /// `GET …/downloadBillFile.resource?bizDates=yyyyMMdd…`: the zip, or 404 (the file does not exist).
    func billFile(query: [String: String]) -> (status: Int, body: [UInt8]) {
        guard let compact = query["bizDates"], compact.utf8.count == 8 else { return (404, Array("no such file".utf8)) }
        let date = "\(compact.prefix(4))-\(compact.dropFirst(4).prefix(2))-\(compact.suffix(2))"
        guard let zip = bill(date: date) else { return (404, Array("no such file".utf8)) }
        return (200, zip)
    }

    /// One row of a day's detail, with what the sums need.
    private struct BillRow {
        var time: String
        var fields: [String]
        var refund: Bool
        var order: Int64
        var receipt: Int64
        var fee: Int64
    }

    /// The trade bill of `date` (`yyyy-MM-dd`, Beijing) as Alipay publishes it: a zip of two GBK CSV files (their
    /// names in GBK too), the detail (a row per payment and per refund finished that day, from what this sandbox
    /// charged and refunded, fees included) and its summary; nil for a day without either.
    func bill(date: String) -> [UInt8]? {
        let rows = billRows(date: date)
        guard !rows.isEmpty else { return nil }
        var (trades, tradeOrder, tradeReceipt, refundReceipt, fee) = (0, Int64(0), Int64(0), Int64(0), Int64(0))
        for row in rows {
            fee += row.fee
            if row.refund {
                refundReceipt += row.receipt
            } else {
                (trades, tradeOrder, tradeReceipt) = (trades + 1, tradeOrder + row.order, tradeReceipt + row.receipt)
            }
        }
        let account = sellerID + "0156"
        let compact = date.replacingOccurrences(of: "-", with: "")
        let next = BeijingTime.date(date + " 00:00:00").map { BeijingTime.string($0.addingTimeInterval(86400)) } ?? ""
        let period = "#起始日期：[\(Self.chinese(date + " 00:00:00"))]   终止日期：[\(Self.chinese(next))]"
        let exported = "#导出时间：[\(Self.chinese(BeijingTime.string(clock.now())))]"
        let rule = { (title: String) in
            "#" + String(repeating: "-", count: 41) + title + String(repeating: "-", count: 40)
        }
        var detail = ["#支付宝业务明细查询", "#账号：[\(account)]", period, rule("业务明细列表"), Self.billHeader]
        detail += rows.map { $0.fields.joined(separator: ",") }
        detail += [
            rule("业务明细列表结束"),
            "#交易合计：\(trades)笔，商家实收共\(BillYuan.string(tradeReceipt))元，商家优惠共0.00元",
            "#退款合计：\(rows.count - trades)笔，商家实收退款共\(BillYuan.string(refundReceipt))元，商家优惠退款共0.00元",
            exported,
        ]
        let net = tradeReceipt + refundReceipt
        let totals = { (store: String) -> String in
            let counts = [store, "", String(trades), String(rows.count - trades), BillYuan.string(tradeOrder)]
            let amounts = [net, 0, 0, 0, fee, 0, net - fee].map { BillYuan.string($0) }
            return (counts + amounts).joined(separator: ",")
        }
        let summary = [
            "#支付宝业务汇总查询", "#账号：[\(account)]", period, rule("业务汇总列表"), Self.billSummaryHeader, totals(""),
            totals("合计"), rule("业务汇总列表结束"), exported,
        ]
        var zip = ZipArchiveWriter(utf8Names: false)
        zip.add(name: Self.gbk("\(account)_\(compact)_业务明细.csv"), contents: Self.gbk(Self.file(detail)))
        zip.add(name: Self.gbk("\(account)_\(compact)_业务明细(汇总).csv"), contents: Self.gbk(Self.file(summary)))
        return zip.finished()
    }

    /// The detail rows of `date`, in time order.
    private func billRows(date: String) -> [BillRow] {
        var rows: [BillRow] = []
        for trade in trades.values {
            // Alipay's files are not quoted: commas in a name would shift the columns.
            let subject = trade.subject.replacingOccurrences(of: ",", with: "，")
            let payer = "*沙(\(trade.buyerID.suffix(4)))\t"
            let zeros = ["0.00", "0.00", "0.00", "0.00", "0.00", "", "0.00\t", "0.00"]
            // A refund's row is dated by the trade's creation and the refund's completion, and its 订单金额 is
            // negative like its 商家实收: as in a real bill of 2019-09-16 (Tests/AlipayTests/RealSamples/README.md).
            func fields(_ kind: String, _ time: String, order: Int64, receipt: Int64, request: String, fee: Int64)
                -> [String]
            {
                let created = kind == "退款" ? (trade.paidAt ?? time) : time
                let head = [trade.tradeNo + "\t", trade.outTradeNo + "\t", kind + "\t", subject, created, time]
                let parties = [
                    "\t", "\t", "\t", "\t", payer, BillYuan.string(order), BillYuan.string(receipt),
                ]
                return head + parties + zeros + [request + "\t", BillYuan.string(fee), "0.00", subject]
            }
            if let paid = trade.paidAt, paid.hasPrefix(date) {
                let fee = BillYuan.fee(trade.totalFen)
                rows.append(
                    BillRow(
                        time: paid,
                        fields: fields(
                            "交易", paid, order: trade.totalFen, receipt: trade.totalFen, request: "", fee: fee),
                        refund: false, order: trade.totalFen, receipt: trade.totalFen, fee: fee))
            }
            for (request, fen) in trade.refunds {
                guard let time = trade.refundedAt?[request], time.hasPrefix(date) else { continue }
                let fee = -BillYuan.fee(fen)
                rows.append(
                    BillRow(
                        time: time, fields: fields("退款", time, order: -fen, receipt: -fen, request: request, fee: fee),
                        refund: true, order: trade.totalFen, receipt: -fen, fee: fee))
            }
        }
        return rows.sorted { ($0.time, $0.fields[1], $0.fields[21]) < ($1.time, $1.fields[1], $1.fields[21]) }
    }

    /// Lines as Alipay's files end them (CRLF).
    private static func file(_ lines: [String]) -> String { lines.joined(separator: "\r\n") + "\r\n" }

    /// `2026-11-25 10:01:02` → `2026年11月25日 10:01:02`.
    static func chinese(_ time: String) -> String {
        guard time.utf8.count == 19 else { return time }
        let chars = Array(time)
        return "\(String(chars[0..<4]))年\(String(chars[5..<7]))月\(String(chars[8..<10]))日 \(String(chars[11...]))"
    }

    /// Text as GBK (GB 18030) bytes: everything this sandbox writes is representable.
    static func gbk(_ text: String) -> [UInt8] {
        Array(text.data(using: AlipayBillArchive.encoding) ?? Data())
    }
}
