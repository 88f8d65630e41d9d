import NIOCore
import Testing

@testable import OrderSafeServer

@Suite("Connection caps: the connection idle the longest makes room, a busy one never does")
struct ConnectionBookTests {
    @Test("past an address's cap its longest-idle connection is closed for the new one; other addresses are untouched")
    func perAddress() {
        var book = ConnectionBook<Int>(perAddress: 3, total: 100)
        for id in 1...3 { #expect(book.open(id, address: "a") == .admitted(closing: [])) }
        #expect(book.open(10, address: "b") == .admitted(closing: []))
        book.busy(1)
        book.busy(2)
        book.idle(2)  // 2 finished a request just now: 3 has been idle longer
        #expect(book.open(4, address: "a") == .admitted(closing: [3]))
        #expect(book.open(5, address: "a") == .admitted(closing: [2]))
        #expect(book.count(from: "a") == 3 && book.count(from: "b") == 1)
        book.busy(4)
        book.busy(5)
        #expect(book.open(6, address: "a") == .refused, "every connection of the address is busy")
        book.close(5)
        #expect(book.open(6, address: "a") == .admitted(closing: []))
    }

    @Test(
        "past the total the longest-idle connection of any address is closed; when all are busy the new one is refused")
    func total() {
        var book = ConnectionBook<Int>(perAddress: 0, total: 3)
        #expect(book.open(1, address: "a") == .admitted(closing: []))
        #expect(book.open(2, address: "b") == .admitted(closing: []))
        #expect(book.open(3, address: "c") == .admitted(closing: []))
        book.busy(1)
        #expect(book.open(4, address: "d") == .admitted(closing: [2]))
        book.busy(3)
        book.busy(4)
        #expect(book.open(5, address: "e") == .refused)
        #expect(book.entries.count == 3)
    }

    @Test("both caps at once close two connections, never the same one twice")
    func bothCaps() {
        var book = ConnectionBook<Int>(perAddress: 2, total: 3)
        #expect(book.open(1, address: "x") == .admitted(closing: []))
        #expect(book.open(2, address: "a") == .admitted(closing: []))
        #expect(book.open(3, address: "a") == .admitted(closing: []))
        #expect(book.open(4, address: "a") == .admitted(closing: [2]))
        book.busy(3)
        book.busy(4)
        #expect(book.open(5, address: "b") == .admitted(closing: [1]))
        #expect(book.entries.count == 3 && book.count(from: "x") == 0)
    }

    @Test("an IPv6 client counts by its /64; IPv4 and IPv4-mapped addresses by themselves")
    func addressKeys() throws {
        let first = try SocketAddress(ipAddress: "2001:db8:1:2:aaaa::1", port: 1)
        let second = try SocketAddress(ipAddress: "2001:db8:1:2:bbbb::9", port: 2)
        let other = try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 3)
        #expect(ConnectionLimiter.key(first) == ConnectionLimiter.key(second))
        #expect(ConnectionLimiter.key(first) != ConnectionLimiter.key(other))
        #expect(ConnectionLimiter.key(first) == "2001:db8:1:2::/64")
        #expect(ConnectionLimiter.key(try SocketAddress(ipAddress: "203.0.113.7", port: 4)) == "203.0.113.7")
        #expect(ConnectionLimiter.key(try SocketAddress(ipAddress: "::1", port: 5)) == "::1")
    }
}
