import Hummingbird
@testable import Serve
import XCTest

/// What every request pays for, read as bytes: the bearer token, the path's respelling and the
/// query. Each must read exactly as ARM's rules say, including the inputs a byte reader could
/// get wrong (case, runs of spaces, escapes, letters past ASCII that fold into ASCII ones).
final class ServeRequestReadingTests: XCTestCase {
    func testABearerTokenIsTheSchemeInAnyCaseThenAToken() {
        let accepted = ["Bearer abc", "bearer abc", "BEARER   abc", "  Bearer x", "Bearer \u{00A0}x", "bEaReR eyJ0eXAi.e30.sig",
                        "Bearer \u{301}abc"]
        let refused = ["Bearer", "Bearer ", "Bearer    ", "Basic dXNlcjpwYXNz", "Bearerx abc", "Bearer\tabc", "", "   ",
                       "Bearer \u{00A0}", "Bearer \u{2003}\u{00A0}", "Béarer abc", "Bear abc"]
        for header in accepted { XCTAssertTrue(BearerToken<BasicRequestContext>.isBearer(header), header) }
        for header in refused { XCTAssertFalse(BearerToken<BasicRequestContext>.isBearer(header), header) }
    }

    func testAPathIsRespelledOnlyWhereASegmentDiffers() {
        let literals: Set<String> = ["subscriptions", "resourceGroups", "providers", "Microsoft.Compute", "virtualMachineScaleSets", "keys"]
        let paths = ARMPaths(Router(context: BasicRequestContext.self).buildResponder(), literals: literals)
        let poll = "/subscriptions/s1/resourceGroups/g1/providers/Microsoft.Compute/virtualMachineScaleSets/web/rollingUpgrades/latest"
        // As registered: nothing to do, whatever the query holds.
        XCTAssertNil(paths.normalized(poll + "?api-version=2024-07-01"))
        XCTAssertNil(paths.normalized(poll + "?A=%41&B=PROVIDERS"))
        XCTAssertNil(paths.normalized("/"))
        XCTAssertNil(paths.normalized("//subscriptions//s1"))
        // A name that is no literal keeps its case; a literal's length alone is not a match.
        XCTAssertNil(paths.normalized("/subscriptions/SUBSCRIPTIONX/resourceGroups/PROVIDERS1"))
        // A literal in other letters' case, escapes, and a query kept as sent.
        XCTAssertEqual(paths.normalized("/SUBSCRIPTIONS/s1/resourcegroups/G1?x=%41"), "/subscriptions/s1/resourceGroups/G1?x=%41")
        XCTAssertEqual(paths.normalized("/subscriptions/s1/resourceGroups/g1/PROVIDERS/microsoft.compute"),
                       "/subscriptions/s1/resourceGroups/g1/providers/Microsoft.Compute")
        XCTAssertEqual(paths.normalized("/subscriptions/w%65b"), "/subscriptions/web")
        XCTAssertEqual(paths.normalized("/subscriptions/%50roviders"), "/subscriptions/providers")
        // An escaped separator stays in its segment; the segment is left as sent.
        XCTAssertNil(paths.normalized("/subscriptions/w%2Feb"))
        // The Kelvin sign lowercases to k: Unicode's folding, as before the byte reader.
        XCTAssertEqual(paths.normalized("/t/discovery/\u{212A}EYS"), "/t/discovery/keys")
        // Letters past ASCII that fold to nothing registered stay.
        XCTAssertNil(paths.normalized("/subscriptions/\u{00C9}t\u{00E9}"))
    }

    func testAQueryIsDecodedAndItsFirstKeyWins() {
        XCTAssertEqual(ServeAPI.form("api-version=2024-07-01"), ["api-version": "2024-07-01"])
        XCTAssertEqual(ServeAPI.form("$expand=instanceView&api-version=2024-07-01&api-version=2019-03-01"),
                       ["$expand": "instanceView", "api-version": "2024-07-01"])
        XCTAssertEqual(ServeAPI.form("a=1%2B1&b=x+y&c&d=&=e&f=%zz"), ["a": "1+1", "b": "x y", "c": "", "d": "", "": "e", "f": "%zz"])
        XCTAssertEqual(ServeAPI.form("k=v=w&&"), ["k": "v=w"])
        XCTAssertEqual(ServeAPI.form(""), [:])
        // Split on the bytes & and = as URLs are (RFC 3986), whatever raw letter follows them.
        XCTAssertEqual(ServeAPI.form("a=1&\u{301}b=2"), ["a": "1", "\u{301}b": "2"])
    }
}
