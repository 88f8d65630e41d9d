import Foundation
import Testing

@testable import ChannelSupport

@Suite("JSONObject: strict, fast member reading")
struct JSONObjectTests {
    @Test("strings with every escape, surrogate pairs, integers, nested objects and arrays")
    func reads() throws {
        let text =
            #"{"s":"a\"b\\c\/d\n\u00e9\ud83d\ude00","n":-42,"big":9223372036854775807,"o":{"x":1},"a":[1,{"y":[2,3]},"z"],"nil":null}"#
        let object = try JSONObject(Array(text.utf8))
        #expect(try object.string("s") == "a\"b\\c/d\né😀")
        #expect(try object.int("n") == -42)
        #expect(try object.int("big") == Int64.max)
        #expect(try object.object("o").int("x") == 1)
        #expect(
            try object.optionalArray("a")?.map { String(decoding: $0, as: UTF8.self) } == [
                "1", #"{"y":[2,3]}"#, #""z""#,
            ])
        #expect(try object.optionalString("nil") == nil)
        #expect(try object.optionalString("absent") == nil)
    }

    @Test(
        "sortedText: one line, members of every object (in arrays too) in byte order of their names, values as written but for an escaped solidus"
    )
    func sortedText() throws {
        let text = """
            { "z" : [ {"b":1, "a":"x\\/y\\\\/z"}, 2.50, "s" ],
              "Z": {"y": null, "x": true}, "a1": -1e3, "a": "\\u00e9" }
            """
        let sorted = String(decoding: try JSONObject(Array(text.utf8)).sortedText, as: UTF8.self)
        #expect(sorted == #"{"Z":{"x":true,"y":null},"a":"\u00e9","a1":-1e3,"z":[{"a":"x/y\\/z","b":1},2.50,"s"]}"#)
        #expect(try JSONObject(Array(sorted.utf8)).string("a") == "é", "still JSON, the same content")
    }

    @Test("a duplicate member is found among many; more than RawJSONMembers.maxMembers members are refused")
    func duplicatesAndLimits() throws {
        let names = (0..<RawJSONMembers.maxMembers).map { #""m\#($0)":\#($0)"# }
        #expect(try JSONObject(Array("{\(names.joined(separator: ","))}".utf8)).int("m1023") == 1023)
        let duplicated = "{\(names.dropLast().joined(separator: ",")),\"m5\":0}"
        #expect(throws: JSONObject.Error.notAnObject("duplicate member 'm5'")) {
            try JSONObject(Array(duplicated.utf8))
        }
        let tooMany = "{\(names.joined(separator: ",")),\"one_more\":1}"
        #expect(throws: RawJSONMembers.Error.tooManyMembers) {
            try RawJSONMembers.scan(Array(tooMany.utf8), in: 0..<tooMany.utf8.count)
        }
        #expect(throws: JSONObject.Error.self) { try JSONObject(Array(tooMany.utf8)) }
    }

    @Test("a name given twice is found at every two places, in objects compared pair by pair and in those hashed")
    func duplicateAtEveryPlace() throws {
        let limit = JSONObject.namesComparedInPairs + 2
        for count in 1...limit {
            // Names of one length, differing in one byte only: no two of them are taken for the same.
            let names = (0..<count).map { String(format: "n%03d", $0) }
            let object = try JSONObject(Array("{\(names.map { #""\#($0)":1"# }.joined(separator: ","))}".utf8))
            #expect(object.raw(names[count - 1]) != nil)
            for first in 0..<count {
                for second in first + 1..<count + 1 {
                    var given = names
                    given.insert(names[first], at: second)
                    let text = "{\(given.map { #""\#($0)":1"# }.joined(separator: ","))}"
                    #expect(throws: JSONObject.Error.notAnObject("duplicate member '\(names[first])'"), "\(text)") {
                        try JSONObject(Array(text.utf8))
                    }
                }
            }
        }
    }

    @Test("wrong types, missing members, bad escapes, overflow and leading zeros are errors")
    func refuses() throws {
        let object = try JSONObject(
            Array(#"{"s":"x","n":1.5,"z":012,"o":9223372036854775808,"e":"\q","lone":"\ud800"}"#.utf8))
        #expect(throws: JSONObject.Error.missing("m")) { try object.string("m") }
        #expect(throws: JSONObject.Error.wrongType("s", expected: "an integer")) { try object.int("s") }
        #expect(throws: JSONObject.Error.wrongType("n", expected: "an integer")) { try object.int("n") }
        #expect(throws: JSONObject.Error.wrongType("z", expected: "an integer")) { try object.int("z") }
        #expect(throws: JSONObject.Error.wrongType("o", expected: "an integer")) { try object.int("o") }
        #expect(try JSONObject(Array(#"{"z":0}"#.utf8)).int("z") == 0)
        #expect(throws: JSONObject.Error.wrongType("e", expected: "a string")) { try object.string("e") }
        #expect(throws: JSONObject.Error.wrongType("lone", expected: "a string")) { try object.string("lone") }
        #expect(throws: JSONObject.Error.wrongType("s", expected: "an object")) { try object.object("s") }
        #expect(throws: JSONObject.Error.self) { try JSONObject(Array("[1]".utf8)) }
        #expect(throws: JSONObject.Error.self) { try JSONObject(Array(#"{"a":1"#.utf8)) }
    }

    @Test("encode round-trips through decode")
    func encode() throws {
        for value in ["plain", "quote\" backslash\\ newline\n tab\t ctrl\u{01}", "中文 😀"] {
            #expect(JSONString.decode(ArraySlice(JSONString.encode(value).utf8)) == value)
        }
    }
}
