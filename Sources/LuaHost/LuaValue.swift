/// A Lua value as Swift sees it: the subset a host exchanges with scripts.
///
/// Tables convert to `.array` when their keys are exactly 1...n (an empty table is an empty
/// array) and to `.table` when every key is a string; any other table cannot be converted and
/// reading it reports where.
public enum LuaValue: Equatable, Sendable {
    case `nil`
    case bool(Bool)
    case integer(Int)
    case double(Double)
    case string(String)
    case array([LuaValue])
    case table([String: LuaValue])

    /// The Lua type name of this value, as `type()` would print it.
    public var typeName: String {
        switch self {
        case .nil: return "nil"
        case .bool: return "boolean"
        case .integer, .double: return "number"
        case .string: return "string"
        case .array, .table: return "table"
        }
    }

    /// The string, when this is one.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer, when this is an integer or a double with an exact integer value.
    public var intValue: Int? {
        switch self {
        case .integer(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.0e15: return Int(d)
        default: return nil
        }
    }

    /// The number, when this is one.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The boolean, when this is one.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The string-keyed fields of a table (an empty array counts as an empty table).
    public var fields: [String: LuaValue]? {
        switch self {
        case .table(let t): return t
        case .array(let a) where a.isEmpty: return [:]
        default: return nil
        }
    }
}

extension LuaValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral
{
    /// A Lua string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A Lua integer.
    public init(integerLiteral value: Int) { self = .integer(value) }
    /// A Lua boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A Lua float.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// Lua's nil.
    public init(nilLiteral: ()) { self = .nil }
}
