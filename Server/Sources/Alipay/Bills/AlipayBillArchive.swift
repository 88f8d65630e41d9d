import ChannelSupport
import Foundation

/// The zip `alipay.data.dataservice.bill.downloadurl.query` points to for a `trade` bill: GBK-encoded CSV files, the
/// detail (`{pid}_{yyyyMMdd}_业务明细.csv`) and its summary (`{pid}_{yyyyMMdd}_业务明细(汇总).csv`), their names in GBK
/// too (the zip's UTF-8 flag unset): Alipay's 对账说明, https://opendocs.alipay.com/open/204/106262, and the method's
/// page, https://opendocs.alipay.com/apis/api_15/alipay.data.dataservice.bill.downloadurl.query. Other files in the
/// zip are ignored.
public struct AlipayBillArchive: Sendable {
    /// The detail file's text, decoded.
    public var detail: [UInt8]
    /// The summary file's text, decoded.
    public var summary: [UInt8]
    public var detailName: String
    public var summaryName: String

    /// GB 18030, the superset of GBK that Foundation decodes on every platform.
    public static let encoding = String.Encoding(rawValue: 0x8000_0632)

    /// Unzips and decodes `bytes`; no file may inflate past `maxBytes`.
    public init(_ bytes: [UInt8], maxBytes: Int = 1 << 30) throws(AlipayBillError) {
        let archive: ZipArchive
        do {
            archive = try ZipArchive(bytes, maxEntries: 16)
        } catch {
            throw .archive(error)
        }
        var detail: (ZipArchive.Entry, String)?
        var summary: (ZipArchive.Entry, String)?
        for entry in archive.entries {
            let name =
                entry.isUTF8Name
                ? String(decoding: entry.nameBytes, as: UTF8.self)
                : String(data: Data(entry.nameBytes), encoding: Self.encoding) ?? ""
            let file = name.split(separator: "/").last.map(String.init) ?? name
            if file.hasSuffix("_业务明细.csv") {
                guard detail == nil else { throw .files("two detail files (\(file))") }
                detail = (entry, file)
            } else if file.hasSuffix("_业务明细(汇总).csv") {
                guard summary == nil else { throw .files("two summary files (\(file))") }
                summary = (entry, file)
            }
        }
        guard let detail else { throw .files("no detail file (…_业务明细.csv)") }
        guard let summary else { throw .files("no summary file (…_业务明细(汇总).csv)") }
        self.detail = try Self.text(of: detail.0, named: detail.1, in: archive, maxBytes: maxBytes)
        self.summary = try Self.text(of: summary.0, named: summary.1, in: archive, maxBytes: maxBytes)
        detailName = detail.1
        summaryName = summary.1
    }

    /// An entry inflated and decoded from GBK, as UTF-8 bytes.
    private static func text(of entry: ZipArchive.Entry, named name: String, in archive: ZipArchive, maxBytes: Int)
        throws(AlipayBillError) -> [UInt8]
    {
        let bytes: [UInt8]
        do {
            bytes = try archive.contents(of: entry, maxBytes: maxBytes)
        } catch {
            throw .archive(error)
        }
        guard let text = String(data: Data(bytes), encoding: encoding) else { throw .encoding(file: name) }
        return Array(text.utf8)
    }
}
