@testable import Reports
import XCTest

/// The sweep page's histograms, computed in Swift: the lowest and highest value and 20 bins,
/// whatever the values (one value, none, a span wider than a Double holds, values that are not
/// finite).
final class SweepPageHistogramTests: XCTestCase {
    func testTheLowestTheMiddleAndTheHighestValueFallInTheFirstAMiddleAndTheLastBin() {
        let histogram = Histogram([7, 8, 9, 9])
        XCTAssertEqual(histogram.runs, 4)
        XCTAssertEqual(histogram.lowest, 7)
        XCTAssertEqual(histogram.highest, 9)
        XCTAssertEqual(histogram.counts.count, 20)
        XCTAssertEqual(histogram.counts[0], 1)
        XCTAssertEqual(histogram.counts[10], 1)
        XCTAssertEqual(histogram.counts[19], 2)
        XCTAssertEqual(histogram.counts.reduce(0, +), 4)
    }

    func testEqualValuesAllFallInTheFirstBin() {
        let histogram = Histogram(Array(repeating: 600, count: 5))
        XCTAssertEqual(histogram.counts[0], 5)
        XCTAssertEqual(histogram.lowest, histogram.highest)
    }

    func testNoValuesIsAnEmptyHistogram() {
        let histogram = Histogram([])
        XCTAssertEqual(histogram.runs, 0)
        XCTAssertNil(histogram.lowest)
        XCTAssertEqual(histogram.counts, Array(repeating: 0, count: 20))
    }

    /// From -1e308 to 1e308 the span overflows to infinity: the bins are found from halves.
    func testASpanWiderThanADoubleAndValuesThatAreNotFinite() {
        let histogram = Histogram([-1e308, 0, 1e308, .infinity, .nan, -.infinity])
        XCTAssertEqual(histogram.runs, 3, "values that are not finite are left out")
        XCTAssertEqual(histogram.counts[0], 1)
        XCTAssertEqual(histogram.counts[10], 1)
        XCTAssertEqual(histogram.counts[19], 1)
    }
}
