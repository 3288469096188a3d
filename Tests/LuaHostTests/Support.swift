import LuaHost
import XCTest

extension XCTestCase {
    /// The `LuaError` that `body` threw, or nil when it returned (or threw something else).
    func error(_ body: () throws -> Any) -> LuaError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error as? LuaError
        }
    }
}
