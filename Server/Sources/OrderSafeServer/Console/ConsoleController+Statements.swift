import Engine
import Foundation
import HTTPTypes
import Hummingbird
import OrderSafeModel

extension ConsoleController {
    func addStatementRoutes(to admin: RouterGroup<OrderSafeRequestContext>) {
        admin.get("statements") { request, context in
            try await signedIn(request, context) { page in try await statements(page) }
        }
        admin.get("statements/:channel/:day") { request, context in
            try await signedIn(request, context) { page in
                try await statement(page, try await report(context))
            }
        }
        admin.get("statements/:channel/:day/csv") { request, context in
            try await signedIn(request, context) { _ in StatementCSV.response(try await report(context)) }
        }
    }

    private func report(_ context: OrderSafeRequestContext) async throws -> StatementReport {
        guard let channel = context.parameters.get("channel").flatMap(Channel.init(rawValue:)),
            let day = context.parameters.get("day").flatMap(StatementDay.init),
            let report = try await desk.statements.report(channel, day: day)
        else { throw ConsolePageError.notFound }
        return report
    }

    /// The days checked, newest first, each channel's outcome in a row.
    private func statements(_ page: PageRequest) async throws -> Response {
        let texts = page.texts
        var values = frame(page, title: texts["nav_statements"] ?? "", section: .statements)
        values["runs"] = try await desk.statements.reports(limit: 62).map { report in
            [
                "day": report.day, "channel": texts["channel_\(report.channel.rawValue)"] ?? report.channel.rawValue,
                "link": "/admin/statements/\(report.channel.rawValue)/\(report.day)",
                "status": texts["statement_\(report.status.rawValue)"] ?? report.status.rawValue,
                "problem": report.status == .discrepancies,
                "matched": Self.tally(report.matched), "recovered": Self.tally(report.recovered),
                "refunds": report.refundsMatched.count + report.refundsRecovered.count,
                "flagged": report.flagged.count,
            ] as [String: Any]
        }
        return views.page("statements", values)
    }

    /// One channel's day: its totals, what it recovered, every difference with its evidence, and the CSV.
    private func statement(_ page: PageRequest, _ report: StatementReport) async throws -> Response {
        let texts = page.texts
        let channel = texts["channel_\(report.channel.rawValue)"] ?? report.channel.rawValue
        var values = frame(
            page, title: "\(texts["nav_statements"] ?? "") \(channel) \(report.day)", section: .statements)
        values["day"] = report.day
        values["channel"] = channel
        values["status"] = texts["statement_\(report.status.rawValue)"] ?? report.status.rawValue
        values["problem"] = report.status == .discrepancies
        if let waitingFor = report.waitingFor { values["waitingFor"] = waitingFor }
        values["ranAt"] = page.format.time(report.ranAt) as String
        values["csv"] = "/admin/statements/\(report.channel.rawValue)/\(report.day)/csv"
        var rows = [
            ["label": texts["matched"] ?? "", "value": Self.tally(report.matched)],
            ["label": texts["recovered"] ?? "", "value": Self.tally(report.recovered)],
            ["label": texts["refunds_matched"] ?? "", "value": Self.tally(report.refundsMatched)],
            ["label": texts["refunds_recovered"] ?? "", "value": Self.tally(report.refundsRecovered)],
            ["label": texts["other_day"] ?? "", "value": "\(report.otherDay)"],
            ["label": texts["refunds_other_day"] ?? "", "value": "\(report.refundsOtherDay)"],
            ["label": texts["shared"] ?? "", "value": "\(report.shared)"],
            ["label": texts["flagged_count"] ?? "", "value": Self.tally(report.flagged)],
        ]
        if let fundFlow = report.fundFlow {
            let counts = [fundFlow.matched, fundFlow.onlyInTradeBill, fundFlow.onlyInFundFlow, fundFlow.differing]
            let value =
                fundFlow.status == .checked
                ? counts.map(String.init).joined(separator: " · ")
                : "\(fundFlow.status.rawValue)\(fundFlow.reason.map { ": " + $0 } ?? "")"
            rows.append(["label": texts["fund_flow"] ?? "", "value": value])
        }
        values["rows"] = rows
        if let totals = report.statementTotals {
            values["totals"] = "\(totals.rows) · \(totals.paidMinor) / \(totals.refundedMinor) / \(totals.feeMinor)"
        }
        values["discrepancies"] = report.discrepancies.map { discrepancy in
            var row: [String: Any] = [
                "kind": texts["discrepancy_\(discrepancy.kind.rawValue)"] ?? discrepancy.kind.rawValue,
                "transactionID": discrepancy.transactionID, "line": discrepancy.line.map(String.init) ?? "",
                "statementAmount": discrepancy.statementAmount.map(ConsoleFormat.money) ?? "",
                "ledgerAmount": discrepancy.ledgerAmount.map(ConsoleFormat.money) ?? "", "detail": discrepancy.detail,
            ]
            if let orderNo = discrepancy.orderNo {
                row["orderNo"] = orderNo
                row["orderLink"] = "/admin/orders/\(Self.pathSegment(orderNo))"
            }
            return row
        }
        return views.page("statement", values)
    }

    /// `3 · CNY 297.00` (each currency), or `0`.
    static func tally(_ tally: StatementReport.Tally) -> String {
        let sums = tally.amountMinor.sorted { $0.key < $1.key }.compactMap { code, minor in
            CurrencyCode(code).map { ConsoleFormat.money(Money(amountMinor: minor, currency: $0)) }
        }
        return ([String(tally.count)] + sums).joined(separator: " · ")
    }
}

/// A day's differences as a CSV a finance team opens in Excel: UTF-8 with a byte-order mark (so Excel reads the
/// Chinese), quoted where needed, and no cell that Excel would run as a formula.
enum StatementCSV {
    static let header = [
        "day", "channel", "kind", "order_no", "transaction_id", "line", "statement_currency", "statement_amount",
        "ledger_currency", "ledger_amount", "detail",
    ]

    static func response(_ report: StatementReport) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = "text/csv; charset=utf-8"
        fields[.contentDisposition] =
            "attachment; filename=\"statement-\(report.channel.rawValue)-\(report.day).csv\""
        fields[.cacheControl] = "no-store"
        fields[.xContentTypeOptions] = "nosniff"
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes(report))))
    }

    static func bytes(_ report: StatementReport) -> [UInt8] {
        var text = line(header)
        for discrepancy in report.discrepancies {
            let amount = { (money: Money?) -> [String] in
                money.map {
                    [$0.currency.code, ConsoleFormat.amount($0.amountMinor, digits: $0.currency.minorUnitDigits)]
                }
                    ?? ["", ""]
            }
            text += line(
                [
                    report.day, report.channel.rawValue, discrepancy.kind.rawValue, discrepancy.orderNo ?? "",
                    discrepancy.transactionID, discrepancy.line.map(String.init) ?? "",
                ]
                    + amount(discrepancy.statementAmount) + amount(discrepancy.ledgerAmount) + [discrepancy.detail])
        }
        return [0xEF, 0xBB, 0xBF] + Array(text.utf8)
    }

    /// One record: each field quoted when it holds a comma, semicolon, quote or line break, and never a formula
    /// (``formulaSafe(_:)``).
    static func line(_ fields: [String]) -> String {
        fields.map { field in
            let value = formulaSafe(field)
            guard value.contains(where: { $0 == "," || $0 == ";" || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else {
                return value
            }
            return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }.joined(separator: ",") + "\r\n"
    }

    /// What starts a formula in Excel and its kin: `=`, `+`, `-`, `@` and their fullwidth forms (which a Chinese IME
    /// types, and spreadsheets fold to ASCII), a tab or CR first (OWASP's CSV injection list).
    static let formulaStarts = Set("=+-@\t\r＝＋－＠".unicodeScalars)

    /// `value` with an apostrophe before a formula's start: at the beginning, after any invisible characters
    /// (zero-width spaces, joiners, byte-order marks: format characters Excel skips), and after each semicolon, which
    /// a spreadsheet set to a semicolon list separator reads as the start of a cell.
    static func formulaSafe(_ value: String) -> String {
        var safe = String.UnicodeScalarView()
        var cellStart = true
        for scalar in value.unicodeScalars {
            if cellStart, formulaStarts.contains(scalar) { safe.append("'") }
            safe.append(scalar)
            if scalar == ";" {
                cellStart = true
            } else if scalar.properties.generalCategory != .format && scalar != " " {
                cellStart = false
            }
        }
        return String(safe)
    }
}
