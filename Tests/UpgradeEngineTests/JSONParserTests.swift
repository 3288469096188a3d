import Formats
import Foundation
import XCTest

/// The JSON reader every untrusted document goes through (policies, health bodies, manifests,
/// indexes, locks): RFC 8259's grammar, positions in its errors, and a cost that follows the
/// text's length whatever its shape.
final class JSONParserTests: XCTestCase {
    func testValuesEscapesAndNumbers() throws {
        let json = try JSON.parse(#"""
            {"a": [1, -2, 3.5, 1e3, 0, 9223372036854775807, 92233720368547758070],
             "s": "tab\there \"q\" \\ \/ \u00e9 \ud83d\ude00", "t": true, "f": false, "n": null, "o": {}}
            """#)
        XCTAssertEqual(json.member("a"), .array([.int(1), .int(-2), .double(3.5), .double(1000), .int(0), .int(Int.max), .double(Double("92233720368547758070")!)]))
        XCTAssertEqual(json.member("s"), .string("tab\there \"q\" \\ / é 😀"))
        XCTAssertEqual(json.member("t"), .bool(true))
        XCTAssertEqual(json.member("f"), .bool(false))
        XCTAssertEqual(json.member("n"), .null)
        XCTAssertEqual(json.member("o"), .object([:]))
    }

    func testMalformedTextIsLocatedByLineAndColumn() {
        let cases: [(String, Int, Int)] = [
            ("{\"a\": 1,\n \"b\": tru}", 2, 10), ("[1, 2", 1, 6), ("{\"a\" 1}", 1, 6), ("[01]", 1, 3), ("\"a\u{01}\"", 1, 3),
            ("[1] 2", 1, 5), ("\"\\ud800\"", 1, 7), ("{\"é\": x}", 1, 7),
        ]
        for (text, line, column) in cases {
            XCTAssertThrowsError(try JSON.parse(text), text) { error in
                let error = error as! JSONError
                XCTAssertEqual(error.line, line, text)
                XCTAssertEqual(error.column, column, text)
                XCTAssertNil(error.outOfRange, text)
            }
        }
        // JSON's grammar allows 1e400; a double does not hold it: said so, at the number.
        for (text, number, column) in [("[1, 1e400]", "1e400", 5), ("{\"a\": -2E+999}", "-2E+999", 7), ("[1e-400]", "1e-400", 2)] {
            XCTAssertThrowsError(try JSON.parse(text), text) { error in
                let error = error as! JSONError
                XCTAssertEqual(error.outOfRange, number, text)
                XCTAssertEqual([error.line, error.column], [1, column], text)
            }
        }
    }

    /// Zero written any way, and a number a double holds only as a subnormal, are read.
    func testZerosAndTinyNumbersThatFitAreRead() throws {
        XCTAssertEqual(try JSON.parse("[0e-400, 0.000, -0.0e5, 1e-310]"), .array([.double(0), .double(0), .double(-0.0), .double(1e-310)]))
    }

    /// A key given twice in one object keeps its last value, as ARM's reader (JSON.NET) does: a
    /// Service Fabric sample template Azure deploys gives a variable twice.
    func testAKeyGivenTwiceInOneObjectKeepsItsLastValue() throws {
        let json = try JSON.parse("{\"mode\": \"Rolling\",\n \"mode\": \"Manual\", \"Mode\": \"Automatic\"}")
        XCTAssertEqual(json.member("mode"), .string("Manual"))
        XCTAssertEqual(json.object?.count, 2)
    }

    func testDepthAndSizeAreRefused() {
        XCTAssertThrowsError(try JSON.parse(String(repeating: "[", count: 65) + String(repeating: "]", count: 65))) { error in
            XCTAssertEqual((error as! JSONError).problem, "nests deeper than 64 levels")
        }
        XCTAssertNoThrow(try JSON.parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64)))
        XCTAssertThrowsError(try JSON.parse("[" + String(repeating: " ", count: 100) + "]", maxBytes: 50))
    }

    /// The shapes that made Foundation's decoder slow (values × depth): 1 MiB of empty arrays 63
    /// deep, and a 64 KiB health body of nested objects, each read once well within the 15 s
    /// hostile inputs are allowed (a bound, not a benchmark: `rehearse-bench` measures speed).
    func testHostileShapesAreReadInTimeLinearInTheirLength() throws {
        let prefix = String(repeating: "[", count: 62), suffix = String(repeating: "]", count: 62)
        var body = prefix
        let unit = "[],"
        body += String(repeating: unit, count: ((1 << 20) - 200) / unit.utf8.count) + "[]" + suffix
        var started = Date()
        let deep = try JSON.parse(body, maxBytes: 1 << 20)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
        var level = deep, depth = 0
        while case .array(let items) = level, let first = items.first { level = first; depth += 1 }
        XCTAssertEqual(depth, 62)  // 62 descents: 63 levels of arrays

        var nested = ""
        while nested.utf8.count < 60_000 { nested += #"{"a":{"b":{"c":[1,2,3,{"d":"e"}]}}},"# }
        let health = "{\"applicationHealthState\": \"Healthy\", \"x\": [" + nested + "{}]}"
        started = Date()
        for _ in 0..<20 { _ = try JSON.parse(health, maxBytes: 64 * 1024, maxDepth: 32) }
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
    }

    /// Written strings escape exactly the quote, the backslash and the control characters, and
    /// read back as they were; a string with none of them is written as it is.
    func testStringsAreEscapedOnlyWhereTheyMustBeAndReadBack() throws {
        let tricky = "a\"b\\c\nd\re\tf\u{01}g\u{1F}h é ✓ 𝄞"
        XCTAssertEqual(JSON.string(tricky).serialized(pretty: false), #""a\"b\\c\nd\re\tf\u0001g\u001fh é ✓ 𝄞""#)
        XCTAssertEqual(try JSON.parse(JSON.string(tricky).serialized(pretty: false)), .string(tricky))
        XCTAssertEqual(JSON.string("Completed é ✓").serialized(pretty: false), "\"Completed é ✓\"")
        XCTAssertEqual(JSON.string("").serialized(pretty: false), "\"\"")
    }
}
