import ChannelSupport
import Foundation
import OrderSafeModel

/// One line of the sandbox App Store's journal (``SandboxJournal``): a transaction as signed from then on (a new
/// purchase, or one signed again: a refund, a renewal date extension), with what that change added to the store.
struct KeptTransaction: Codable {
    /// A notification of the App Store Server Notifications history.
    struct Notification: Codable {
        var signedDate: Int64
        var payload: String
    }

    var id: String
    var signed: String
    /// The signed payload as JSON text (the store signs it again when it changes).
    var payload: String
    var token: UUID?
    /// Its original transaction's id (itself for a first purchase).
    var original: String
    /// Where the subscription's period ends now, for a purchase or an extension of one.
    var periodEnd: Date?
    /// An auto-renewable subscription's period, for a purchase (what its renewals last).
    var period: GrantPeriod?
    /// Its entry in the app's StoreKit 1 receipt (new purchases).
    var receiptEntry: SandboxReceiptSigner.Purchase?
    /// The device it was bought on (new purchases made through ``SandboxAppStoreDevices``).
    var device: String?
    var notification: Notification?
    /// An auto-renewable subscription's renewal information as signed from then on (JSON text), when it changed.
    var renewal: String?

    init(
        id: String, signed: String, payload: String, token: UUID? = nil, original: String, periodEnd: Date? = nil,
        period: GrantPeriod? = nil, receiptEntry: SandboxReceiptSigner.Purchase? = nil, device: String? = nil,
        notification: Notification? = nil,
        renewal: String? = nil
    ) {
        self.id = id
        self.signed = signed
        self.payload = payload
        self.token = token
        self.original = original
        self.periodEnd = periodEnd
        self.period = period
        self.receiptEntry = receiptEntry
        self.device = device
        self.notification = notification
        self.renewal = renewal
    }
}

extension KeptTransaction: JournalLine {
    /// The line JSONEncoder would write (every member, the nil ones left out), the signed text not escaped a character
    /// at a time (a JWS has nothing to escape: ``JSONString/encode(_:)`` sees so in one pass).
    func journalJSON() throws -> String {
        let encoder = JSONEncoder()
        func encoded(_ value: some Encodable) throws -> String {
            String(decoding: try encoder.encode(value), as: UTF8.self)
        }
        var fields = [
            #""id":\#(JSONString.encode(id))"#, #""signed":\#(JSONString.encode(signed))"#,
            #""payload":\#(JSONString.encode(payload))"#,
        ]
        if let token { fields.append(#""token":\#(try encoded(token))"#) }
        fields.append(#""original":\#(JSONString.encode(original))"#)
        if let periodEnd { fields.append(#""periodEnd":\#(try encoded(periodEnd))"#) }
        if let period { fields.append(#""period":\#(try encoded(period))"#) }
        if let receiptEntry { fields.append(#""receiptEntry":\#(try encoded(receiptEntry))"#) }
        if let device { fields.append(#""device":\#(JSONString.encode(device))"#) }
        if let notification {
            fields.append(
                #""notification":{"signedDate":\#(notification.signedDate),"payload":\#(JSONString.encode(notification.payload))}"#
            )
        }
        if let renewal { fields.append(#""renewal":\#(JSONString.encode(renewal))"#) }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

extension KeptTransaction {
    /// What of a journal line the store keeps in memory: not the signed text, the payload or the notification, which
    /// stay in the journal (read back by their ``SandboxJournal/Ref``), only what the next purchase and the
    /// indexes need.
    struct Index {
        struct Notification {
            var signedDate: Int64
        }

        var id: String
        var token: UUID?
        var original: String
        var periodEnd: Date?
        var period: GrantPeriod?
        var device: String?
        var notification: Notification?
        var renewal: String?

        /// Reads what the index keeps of a journal line without building its signed text, payload or notification:
        /// its members found by a scan, only the small ones decoded (a line is about 13 KB; the index, a few fields).
        init(line: [UInt8]) throws {
            let members = try RawJSONMembers.extract(line)
            let decoder = JSONDecoder()
            func value<T: Decodable>(_ name: String, in members: [String: ArraySlice<UInt8>]) throws -> T? {
                guard let raw = members[name], !raw.elementsEqual("null".utf8) else { return nil }
                return try decoder.decode(T.self, from: Data(raw))
            }
            guard let id: String = try value("id", in: members),
                let original: String = try value("original", in: members)
            else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no id or original")) }
            (self.id, self.original) = (id, original)
            token = try value("token", in: members)
            periodEnd = try value("periodEnd", in: members)
            period = try value("period", in: members)
            device = try value("device", in: members)
            renewal = try value("renewal", in: members)
            if let raw = members["notification"], !raw.elementsEqual("null".utf8) {
                let fields = try RawJSONMembers.extract(Array(raw))
                guard let signedDate: Int64 = try value("signedDate", in: fields) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a notification undated"))
                }
                notification = Notification(signedDate: signedDate)
            }
        }

        init(_ kept: KeptTransaction) {
            (id, token, original, periodEnd, period) = (kept.id, kept.token, kept.original, kept.periodEnd, kept.period)
            device = kept.device
            notification = kept.notification.map { Notification(signedDate: $0.signedDate) }
            renewal = kept.renewal
        }
    }
}

/// Where the sandbox App Store's record is: every transaction as last signed and every notification are lines of its
/// journal, found through this index (a transaction's line by its id, notifications in the order they were made);
/// in memory beside it only what the subscriptions and the devices need next. Apple's record is history — its
/// transaction history (V2) holds every purchase, consumables included, and its notification history every
/// notification — so the journal grows with what the store sold; memory grows by the index alone (a few dozen bytes a
/// transaction), not by the signed text.
struct SandboxAppStoreRecords {
    typealias Ref = SandboxJournal<KeptTransaction>.Ref

    /// The line that signed each transaction last: by its numeric id (the store's own ids are), else by the text.
    private var numbered: [Int64: Ref] = [:]
    private var named: [String: Ref] = [:]
    /// Each notification's date and line, in the order made.
    private(set) var notifications: [(signedDate: Int64, ref: Ref)] = []
    /// The transactions of each chain that has more than its first (a subscription and its renewals), oldest first;
    /// a transaction in no chain is its own.
    private var chains: [String: [String]] = [:]
    /// Each subscription's `appAccountToken` (its renewals carry it), by original transaction id.
    private(set) var chainTokens: [String: UUID] = [:]
    /// Where each auto-renewable subscription's current period ends, by original transaction id.
    var periodEnds: [String: Date] = [:]
    /// Each auto-renewable subscription's period, by original transaction id.
    var periods: [String: GrantPeriod] = [:]
    /// The device that bought each transaction bought on one (``SandboxAppStoreDevices``), and each device's chains.
    private(set) var purchasingDevices: [String: String] = [:]
    private var deviceChains: [String: [String]] = [:]
    /// Each auto-renewable subscription's renewal information as last signed, by original transaction id.
    var renewals: [String: [String: Any]] = [:]
    /// The first transaction kept (what an order lookup answers), and the count.
    private(set) var first: String?
    private(set) var count = 0

    /// The line that signed `id` last.
    func line(of id: String) -> Ref? {
        if let number = Int64(id), String(number) == id { return numbered[number] }
        return named[id]
    }

    private mutating func setLine(_ ref: Ref, of id: String) -> Bool {
        if let number = Int64(id), String(number) == id {
            return numbered.updateValue(ref, forKey: number) == nil
        }
        return named.updateValue(ref, forKey: id) == nil
    }

    /// The transactions of chain `original` when it has more than its first; nil for a transaction in no chain.
    func chain(_ original: String) -> [String]? { chains[original] }

    /// Records a line kept now (or read back at start): `kept` is what the index keeps of it, `ref` where it is.
    mutating func apply(_ kept: KeptTransaction.Index, at ref: Ref) {
        if setLine(ref, of: kept.id) {
            count += 1
            if first == nil { first = kept.id }
            // A subscription's first purchase starts a chain; a renewal joins its original's.
            if kept.original != kept.id || kept.period != nil {
                chains[kept.original, default: kept.original == kept.id ? [] : [kept.original]].append(kept.id)
            }
            if kept.original == kept.id, kept.period != nil, let token = kept.token { chainTokens[kept.id] = token }
            if let device = kept.device {
                purchasingDevices[kept.id] = device
                if kept.original == kept.id { deviceChains[device, default: []].append(kept.id) }
            }
        }
        if let end = kept.periodEnd { periodEnds[kept.original] = end }
        if let period = kept.period { periods[kept.original] = period }
        if let renewal = kept.renewal,
            let fields = (try? JSONSerialization.jsonObject(with: Data(renewal.utf8))) as? [String: Any]
        {
            renewals[kept.original] = fields
        }
        if let notification = kept.notification { notifications.append((notification.signedDate, ref)) }
    }

    /// The chains of the customer whose history holds chain `chain` (Get Transaction History is the customer's, not
    /// the subscription's: https://developer.apple.com/documentation/appstoreserverapi/get-transaction-history, "a
    /// customer's in-app purchase transaction history for your app"): here a customer is the device that bought it,
    /// whose every chain the history holds, or, for a chain no device bought, that chain alone.
    func customerChains(of chain: String) -> [String] {
        purchasingDevices[chain].flatMap { deviceChains[$0] } ?? [chain]
    }

    /// The transactions of `chains`, each chain's in order.
    func transactions(of chains: [String]) -> [String] {
        chains.flatMap { self.chains[$0] ?? [$0] }
    }
}
