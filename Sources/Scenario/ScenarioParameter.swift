import Formats
import LuaHost

/// A parameter a script declares with `param("bootFailure", 0.05)`: its value comes from
/// `--param bootFailure=0.1`, or is the default. The default's type is the parameter's type.
public struct ScenarioParameter: Equatable, Sendable {
    /// What a parameter holds.
    public enum Kind: String, Sendable {
        case integer, number, boolean, string, duration

        /// "an" or "a", for messages.
        var article: String { self == .integer ? "an" : "a" }

        /// A value given on the command line as this kind; nil when it is not one.
        func value(_ text: String) -> LuaValue? {
            switch self {
            case .integer: return Int(text).map(LuaValue.integer)
            case .number:
                // Finite only. (Spelt out: `LuaValue` takes `nil` as Lua's nil, so a ternary with
                // `nil` gave `.nil`, a value, and `param` returned nil for `inf`.)
                guard let number = Double(text), number.isFinite else { return nil }
                return .double(number)
            case .boolean: return text == "true" ? .bool(true) : text == "false" ? .bool(false) : nil
            case .string: return .string(text)
            case .duration: return ISODuration.parse(text).isSuccess ? .string(text) : nil
            }
        }
    }

    /// Its name.
    public var name: String
    /// What it holds.
    public var kind: Kind
    /// The default, as the script wrote it.
    public var defaultValue: String
    /// Where it was first declared (`file:line`).
    public var location: String

    /// A parameter named `name` holding `kind`, defaulting to `defaultValue` (as written), declared at `location`.
    public init(name: String, kind: Kind, defaultValue: String, location: String) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.location = location
    }
}

extension Result {
    /// Whether this is a success.
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

extension LuaValue {
    /// A scalar as text (`0.05`, `true`, `PT5M`).
    var plainText: String {
        switch self {
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return String(b)
        case .string(let s): return s
        default: return typeName
        }
    }
}
