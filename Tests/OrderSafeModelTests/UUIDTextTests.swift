import Foundation
@_spi(OrderSafeServer) import OrderSafeModel
import Testing

@Suite("UUID text: the 36 characters Foundation writes, in either case")
struct UUIDTextTests {
    @Test("each of 10,000 random UUIDs and the edge values reads as uuidString does, and lowercased")
    func matchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        let edges = [
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
            UUID(uuidString: "01A23247-C5D0-8A05-8003-5B7AEE850652")!,
        ]
        let random = (0..<10_000).map { _ in
            UUID(
                uuid: withUnsafeBytes(of: (generator.next() as UInt64, generator.next() as UInt64)) {
                    $0.load(as: uuid_t.self)
                })
        }
        for uuid in edges + random {
            #expect(uuid.text() == uuid.uuidString)
            #expect(uuid.text(lowercase: true) == uuid.uuidString.lowercased())
        }
        #expect(edges[2].text(lowercase: true) == "01a23247-c5d0-8a05-8003-5b7aee850652")
    }
}
