import ChannelSupport
import Foundation

/// The zip `alipay.data.dataservice.bill.downloadurl.query` points to for a `trade` bill: GBK-encoded CSV files, the
/// detail (`{pid}_{yyyyMMdd}_业务明细.csv`) and its summary (`{pid}_{yyyyMMdd}_业务明细(汇总).csv`), their names in GBK
/// too (the zip's UTF-8 flag unset): Alipay's 对账说明, https://opendocs.alipay.com/open/204/106262, and the method's
/// page, https://opendocs.alipay.com/apis/api_15/alipay.data.dataservice.bill.downloadurl.query. Other files in the
/// zip are ignored. Its files are read a line at a time (``lines(of:)``), never whole.
public struct AlipayBillArchive: Sendable {
    /// The two files a trade bill holds.
    public enum File: Sendable {
        case detail, summary
    }

    private let archive: ZipArchive
    private let detail: (entry: ZipArchive.Entry, name: String)
    private let summary: (entry: ZipArchive.Entry, name: String)
    private let maxBytes: Int

    /// GB 18030, the superset of GBK that Foundation decodes on every platform.
    public static let encoding = String.Encoding(rawValue: 0x8000_0632)

    /// Reads the zip's directory and finds both files; no file may inflate past `maxBytes`.
    public init(_ bytes: [UInt8], maxBytes: Int = 1 << 30) throws(AlipayBillError) {
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
        self.detail = detail
        self.summary = summary
        self.maxBytes = maxBytes
    }

    /// A file's name, as the zip gives it.
    public func name(of file: File) -> String { file == .detail ? detail.name : summary.name }

    /// A file's lines, inflated and decoded from GBK as they are read.
    func lines(of file: File) throws(AlipayBillError) -> GBKLines {
        let (entry, name) = file == .detail ? detail : summary
        do {
            return GBKLines(try archive.reader(of: entry, maxBytes: maxBytes, name: name), file: name)
        } catch {
            throw .archive(error)
        }
    }
}
