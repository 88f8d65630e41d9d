import Foundation
import Ledger
import OrderSafeModel

/// The overview's revenue chart, drawn on the server as SVG: one chart per currency (amounts in different currencies
/// are never added up), a bar per day stacked by channel, each piece titled with its exact amount.
struct RevenueChart: Sendable {
    let days: [String]
    let revenue: [LedgerOverview.RevenueDay]
    let channelNames: [Channel: String]

    /// The built-in channels' colours (another channel's bars are grey).
    static let colours = Dictionary(
        uniqueKeysWithValues: ChannelRegistry.builtIn.all.map { ($0.channel, $0.label.colour) })

    /// One `<svg>` per currency that has revenue, in currency order.
    func svgs() -> [(currency: String, svg: String)] {
        let currencies = Set(revenue.map(\.amount.currency.code)).sorted()
        return currencies.map { currency in (currency, svg(currency: currency)) }
    }

    private func svg(currency: String) -> String {
        let rows = revenue.filter { $0.amount.currency.code == currency }
        let digits = rows.first?.amount.currency.minorUnitDigits ?? 2
        var byDay: [String: [(Channel, Int64)]] = [:]
        for row in rows { byDay[row.day, default: []].append((row.channel, row.amount.amountMinor)) }
        let top = max(days.map { day in byDay[day, default: []].reduce(Int64(0)) { $0 &+ max($1.1, 0) } }.max() ?? 1, 1)
        let width = 24 * days.count + 96
        let height = 220
        let plot = 180
        let bar = 18
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)">\
            <title>\(Self.escape(currency))</title>\
            <text x="0" y="12" class="axis">\(Self.escape(ConsoleFormat.amount(top, digits: digits)))</text>\
            <line x1="56" y1="\(plot)" x2="\(width)" y2="\(plot)" class="base"/>
            """
        for (index, day) in days.enumerated() {
            let x = 60 + index * 24
            var y = plot
            for (channel, amount) in byDay[day, default: []].sorted(by: { $0.0.rawValue < $1.0.rawValue })
            where amount > 0 {
                // Scaled in integers: amount / top of the plot's height, at least a pixel so a small day shows.
                let h = max(Int((Int64(plot - 10).multipliedReportingOverflow(by: amount).partialValue) / top), 1)
                y -= h
                svg += """
                    <rect x="\(x)" y="\(y)" width="\(bar)" height="\(h)" fill="\(Self.colours[channel] ?? "#888")" data-day="\(day)">\
                    <title>\(Self.escape("\(day) \(channelNames[channel] ?? channel.rawValue) \(currency) \(ConsoleFormat.amount(amount, digits: digits))"))</title></rect>
                    """
            }
            if index % 5 == 0 || index == days.count - 1 {
                svg += "<text x=\"\(x)\" y=\"\(plot + 16)\" class=\"axis\">\(Self.escape(String(day.suffix(5))))</text>"
            }
        }
        var legendX = 60
        let others = Set(rows.map(\.channel)).subtracting(Channel.builtIn).sorted { $0.rawValue < $1.rawValue }
        for channel in Channel.builtIn + others where rows.contains(where: { $0.channel == channel }) {
            let name = channelNames[channel] ?? channel.rawValue
            svg +=
                "<rect x=\"\(legendX)\" y=\"\(plot + 26)\" width=\"10\" height=\"10\" fill=\"\(Self.colours[channel] ?? "#888")\"/>"
            svg += "<text x=\"\(legendX + 14)\" y=\"\(plot + 35)\" class=\"axis\">\(Self.escape(name))</text>"
            legendX += 110
        }
        return svg + "</svg>"
    }

    /// The last `count` days up to `now` in `zone`, `YYYY-MM-DD`, oldest first.
    static func days(endingAt now: Date, count: Int, zone: TimeZone) -> [String] {
        let calendar = Calendar.gregorian(in: zone)
        let today = calendar.startOfDay(for: now)
        return (0..<count).reversed().compactMap { back in
            calendar.date(byAdding: .day, value: -back, to: today).map { LedgerOverview.dayName($0, calendar) }
        }
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
