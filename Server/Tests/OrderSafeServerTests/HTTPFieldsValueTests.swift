import HTTPTypes
import Testing

@testable import OrderSafeServer

/// `HTTPFields.value(of:)` reads what `headers[name]` reads, for every header list a request can carry.
@Suite("HTTPFields.value(of:): the value HTTPTypes' subscript reads")
struct HTTPFieldsValueTests {
    @Test("absent, once, twice, three times, in any letter case, between other fields, and cookies joined their way")
    func sameAsTheSubscript() throws {
        let name = try #require(HTTPField.Name("x-probe"))
        let upper = try #require(HTTPField.Name("X-PROBE"))
        let lists: [[HTTPField]] = [
            [],
            [HTTPField(name: .contentType, value: "application/json")],
            [HTTPField(name: name, value: "one")],
            [
                HTTPField(name: name, value: "one"), HTTPField(name: .accept, value: "*/*"),
                HTTPField(name: upper, value: ""),
            ],
            [
                HTTPField(name: name, value: "a"), HTTPField(name: name, value: "b"),
                HTTPField(name: name, value: "c, d"),
            ],
            [HTTPField(name: .cookie, value: "a=1"), HTTPField(name: .cookie, value: "b=2")],
        ]
        for list in lists {
            let fields = HTTPFields(list)
            for asked in [name, upper, .cookie, .contentType, .authorization] {
                #expect(fields.value(of: asked) == fields[asked], "\(list) \(asked)")
            }
        }
    }
}
