public import Formats
/// Why a call into Lua failed, ready to show to the person who wrote the script.
/// What the host refused and why, as data.
public enum HostRefusal: Equatable, Sendable {
    /// A Lua value handed to the host that it could not read: where in it (`value.k.k`) and why.
    case value(path: String, ValueProblem)
    /// A file the host would not read.
    case file(BoundedFile.Refusal)
    /// A rule of the sandbox the script broke.
    case sandbox(SandboxRule)
    /// A module `require` would not load (a module file it refused to read is `.file`).
    case module(name: String, ModuleProblem)
    /// A host function called where the host does not take it: `function`, while `during` ran
    /// (the host's name for it: `loading`, `at`, `phase`, …).
    case misplaced(function: String, during: String)
    /// A time on the virtual clock that has passed: `time` asked for, the clock reading `now`.
    case past(time: Millis, now: Millis)
    /// A value whose fields the host checked and refused: each problem with its field.
    case invalid([Problem])

    /// Why `require` did not load a module.
    public enum ModuleProblem: Equatable, Sendable {
        /// The name is not dotted letters, digits, `_` and `-` (a path, `..`, an empty part).
        case badName
        /// No module folder holds it: these paths were tried, in order.
        case notFound(tried: [String])
        /// Its file holds precompiled bytecode at this path.
        case bytecode(String)
    }

    /// The sandbox's rules a script can break (each refused with an error the script may catch).
    public enum SandboxRule: Equatable, Sendable {
        /// No `__gc` metamethods (a finalizer could run outside any budgeted call).
        case finalizers
        /// No weak-keyed tables (`__mode = 'k'`): collecting them takes time no budget bounds.
        case weakKeys
        /// No `%p` in `string.format` (addresses differ between runs).
        case formatPointer
        /// `load` takes text chunks only.
        case textChunksOnly
        /// Coroutines nest at most so deep.
        case coroutineDepth
    }

    /// Why a Lua value could not be read.
    public enum ValueProblem: Equatable, Sendable {
        /// More values than this, a shared table counted each time it appears.
        case tooManyValues(Int)
        /// More bytes of strings than this.
        case tooManyBytes(Int)
        /// A string that is not UTF-8.
        case notUTF8
        /// A Lua type the host does not take (`function`, `userdata`, …).
        case unconvertible(String)
        /// A table that contains itself.
        case cycle
        /// Tables nested deeper than this.
        case tooDeep(Int)
        /// No room left on the Lua stack.
        case stackExhausted
        /// Keys of these types (only strings and 1…n are taken).
        case keyTypes([String])
        /// String keys and list items in one table.
        case mixedKeys
        /// A list with holes.
        case holes
    }
}

public struct LuaError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure this was.
    public enum Kind: Equatable, Sendable {
        /// The chunk did not compile (or was refused, e.g. precompiled bytecode).
        case syntax
        /// The script raised an error, or called something with bad arguments.
        case runtime
        /// The call spent its instruction budget (the budget, in instructions).
        case budget(Int)
        /// The run's calls together spent the run's instruction budget (the budget, in instructions).
        case runBudget(Int)
        /// The state hit its memory cap (the cap, in bytes).
        case memory(Int)
        /// A file could not be read (or was refused: too large, not a regular file, outside its folder).
        case file
        /// The host ended the call from inside it (something the call asked of the host failed).
        case aborted
        /// The call's thread spent this many milliseconds of CPU time in it, in work the
        /// instruction budget cannot count (the collector, a C library function).
        case cpuTime(Int)
        /// The run's calls together spent this many milliseconds of CPU time.
        case runCPUTime(Int)
    }

    /// What kind of failure.
    public var kind: Kind
    /// The message without location or traceback, e.g. "attempt to call a nil value (global 'io')".
    public var message: String
    /// Where it happened as `chunk:line` (e.g. `scripts/x.lua:12`), when known.
    public var location: String?
    /// Lua's stack traceback, when the error came from a call.
    public var traceback: String?
    /// The host-side name of what was being called (e.g. "health"), prefixed to the description.
    public var function: String?
    /// What the host refused, when the error is a refusal of the host's (a value it could not
    /// read, a file it would not read), with its figures; nil for the script's own errors. A
    /// refusal raised inside a host function keeps this across the script's frames, unless the
    /// script caught it and raised something else.
    public var refusal: HostRefusal?

    /// An error of `kind` with its message, where it happened, the traceback and the function
    /// that raised it; `refusal`, what the host refused, when it is a refusal.
    public init(kind: Kind, message: String, location: String? = nil, traceback: String? = nil, function: String? = nil,
                refusal: HostRefusal? = nil) {
        self.kind = kind
        self.message = message
        self.location = location
        self.traceback = traceback
        self.function = function
        self.refusal = refusal
    }

    /// One line: `function: message at file:line` for limits, `function: file:line: message`
    /// otherwise. A run-wide limit's sentence does not say how to raise it: the command line,
    /// which names its options, adds that (`runLimit`).
    /// Text that came from a script (the message, the location) has its control characters shown
    /// escaped, so an error cannot move the cursor, clear the screen or forge a line.
    public var description: String {
        let prefix = function.map { "\($0): " } ?? ""
        let at = location.map { " at \(ScriptText.escaped($0))" } ?? ""
        switch kind {
        case .budget(let n):
            return prefix + "budget of \(n) instructions exceeded" + at
        case .runBudget(let n):
            return prefix + "the run's budget of \(n) instructions, across all its calls, exceeded" + at
        case .memory(let bytes):
            return prefix + "memory limit of \(Self.formatBytes(bytes)) exceeded" + at
        case .cpuTime(let ms):
            return prefix + "still running after \(ms) ms of CPU time, in work the instruction budget cannot count (a C library function or the garbage collector)" + at
        case .runCPUTime(let ms):
            return prefix + "the run's scripts have spent more than \(ms) ms of CPU time in calls, each call within its own limits" + at
        default:
            return prefix + (location.map { "\(ScriptText.escaped($0)): " } ?? "") + ScriptText.escaped(message)
        }
    }

    static func formatBytes(_ bytes: Int) -> String {
        if bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }

    /// Splits Lua's "chunk:line: message" into its location and message.
    static func splitLocation(_ text: String) -> (location: String?, message: String) {
        // A location is "name:digits: " at the start; chunk names may contain ':' themselves.
        var search = text[...]
        while let colon = search.firstIndex(of: ":") {
            let afterColon = text.index(after: colon)
            let digits = text[afterColon...].prefix(while: { $0.isASCII && $0.isNumber })
            if !digits.isEmpty, digits.endIndex < text.endIndex, text[digits.endIndex] == ":" {
                let location = String(text[..<digits.endIndex])
                var rest = text[text.index(after: digits.endIndex)...]
                if rest.first == " " { rest = rest.dropFirst() }
                return (location, String(rest))
            }
            search = text[afterColon...]
        }
        return (nil, text)
    }
}

extension LuaError: UserFacingError {
    /// The script line, when Lua said which (`location` is Lua's own `chunk:line` text, read
    /// once here at the edge).
    public var place: Location? { location.flatMap(ScriptLine.init(lua:)).map(Location.script) }
    /// Bad input (a script that fails or exceeds a limit): 2.
    public var exitCode: Int32 { 2 }

    /// The run-wide limit this error reached, when it reached one, so the command line can name
    /// the option that raises it.
    public var runLimit: LuaRunLimit? {
        switch kind {
        case .runBudget: return .instructions
        case .runCPUTime: return .cpuTime
        default: return nil
        }
    }
}

/// A limit on a run's scripts taken together (the per-call limits have no way to be raised).
public enum LuaRunLimit: Sendable, Equatable {
    /// Instructions across all the run's calls.
    case instructions
    /// CPU time across all the run's calls.
    case cpuTime
}
