public import Formats
import CLua
import CLuaSupport
import Foundation

/// The most text one `print` line keeps, in bytes; the rest is counted, not copied.
public let maxPrintBytes = 64 * 1024

/// What a sandboxed state gets from its host instead of the operating system.
public struct LuaSandboxOptions {
    /// Folders `require` may load Lua files from, searched in order. A module name maps to
    /// `folder/a/b.lua` or `folder/a/b/init.lua` for `require "a.b"`.
    public var moduleFolders: [String]
    /// Asked first for every `require`: returns the module's source text and the path to show
    /// in errors, or nil to search `moduleFolders`. Throw to refuse (the message reaches the script).
    public var resolveModule: ((String) throws -> (source: String, path: String)?)?
    /// Seed of `math.random`; `math.randomseed()` without an argument returns to it.
    public var seed: UInt64
    /// Receives each line `print` writes.
    public var print: (String) -> Void
    /// Seconds on the virtual clock: `os.clock()` returns it, `os.time()` adds it to `epoch`.
    public var clock: () -> Double
    /// Unix time of virtual second 0, for `os.time()`.
    public var epoch: Int

    /// Options for a sandbox; every one has a default.
    public init(moduleFolders: [String] = [], seed: UInt64 = 0, print: @escaping (String) -> Void = { Swift.print($0) },
                clock: @escaping () -> Double = { 0 }, epoch: Int = 1_704_067_200) {
        self.moduleFolders = moduleFolders
        self.seed = seed
        self.print = print
        self.clock = clock
        self.epoch = epoch
    }
}

/// The generator behind a sandbox's `math.random`, shared by its two functions.
final class RandomSource {
    var generator: SeededGenerator
    let seed: UInt64
    init(seed: UInt64) {
        self.seed = seed
        generator = SeededGenerator(seed: seed)
    }
}

extension LuaState {
    /// Replaces the globals with the sandbox of LUA-HOST.md: an allowlist of the standard
    /// library (no io, debug, package, dofile, loadfile, string.dump, os.execute/exit/remove/
    /// rename/tmpname/getenv), `load` for text only, `require` confined to `moduleFolders`,
    /// `print` routed to the host, `math.random` seeded by the host, `os.time`/`os.clock` on the
    /// virtual clock.
    public func openSandbox(_ options: LuaSandboxOptions = LuaSandboxOptions()) throws {
        guard rh_open_sandbox_bridge() == 0 else {
            throw LuaError(kind: .runtime, message: "the sandbox could not be built")
        }
        let random = RandomSource(seed: options.seed)
        let folders = options.moduleFolders
        let hostPrint = function(named: "print") { args in
            // One print line keeps at most `maxPrintBytes` of its text: `print(s, s, ...)` of a
            // 25 MB string must not make the host build gigabytes.
            var parts: [String] = []
            var room = maxPrintBytes
            var dropped = 0
            for i in 0..<args.count {
                let (prefix, length) = try args.stringPrefix(i + 1, maxBytes: room)
                room -= prefix.utf8.count
                dropped += length - prefix.utf8.count
                parts.append(ScriptText.escaped(prefix))
            }
            var line = parts.joined(separator: "\t")
            if dropped > 0 { line += " … (\(dropped) more bytes not shown)" }
            options.print(line)
            return []
        }
        let resolve = options.resolveModule
        let findModule = function(named: "require") { args in
            let name = try args.string(1)
            if let resolved = try resolve?(name) { return [.string(resolved.source), .string(resolved.path)] }
            let found = try ModuleFinder(folders: folders).find(name)
            return [.string(found.source), .string(found.displayPath)]
        }
        let randomFunction = function(named: "random") { args in
            try Self.random(args, &random.generator)
        }
        let seedFunction = function(named: "randomseed") { args in
            switch args.type(1) {
            case .none, .nil: random.generator = SeededGenerator(seed: random.seed)
            case .number:
                let value = try args.value(1)
                let bits = value.intValue.map { UInt64(bitPattern: Int64($0)) } ?? (value.doubleValue ?? 0).bitPattern
                random.generator = SeededGenerator(seed: bits)
            default: throw LuaArgumentError(position: 1, problem: "number expected, got \(args.type(1).name)")
            }
            return []
        }
        let time = function(named: "time") { args in
            guard args.count == 0 || args.type(1) == .nil else {
                throw LuaArgumentError(position: 1, problem: "only os.time() is available: the sandbox runs on a virtual clock")
            }
            return [.integer(options.epoch + Int(options.clock().rounded(.down)))]
        }
        let clock = function(named: "clock") { _ in [.double(options.clock())] }
        // The same rank for the same table or function on every run (its allocation order), so
        // that `pairs` can order such keys without addresses.
        let rank = function(named: "pairs") { [unowned self] args in
            guard args.count >= 1, let pointer = lua_topointer(args.stack.L, 1) else { return [.nil] }
            let value = rh_object_rank(host, pointer)
            return [value < 0 ? .nil : .integer(Int(value))]
        }
        let prelude = try load(Self.prelude, chunkName: "sandbox")
        defer {
            for ref in [prelude, hostPrint, findModule, randomFunction, seedFunction, time, clock, rank] { release(ref) }
        }
        try call(prelude, results: 0, arguments: { stack in
            for ref in [hostPrint, findModule, randomFunction, seedFunction, time, clock, rank] {
                stack.pushReference(ref)
            }
            return 7
        }, read: { _ in })
        rh_host_seal_sandbox(host)
    }

    /// Lua's `math.random` semantics over the host's generator.
    static func random(_ args: LuaArguments, _ generator: inout SeededGenerator) throws -> [LuaValue] {
        switch args.count {
        case 0: return [.double(generator.nextUnit())]
        case 1, 2:
            let low = args.count == 1 ? 1 : try args.integer(1)
            let high = try args.integer(args.count)
            if args.count == 1 && high == 0 { return [.integer(Int(bitPattern: UInt(generator.next())))] }
            guard low <= high else { throw LuaArgumentError(position: args.count, problem: "interval is empty") }
            return [.integer(Int.random(in: low...high, using: &generator))]
        default:
            throw LuaArgumentError(position: 3, problem: "wrong number of arguments")
        }
    }

    /// Trusted Lua run once per sandbox: it receives the host functions and defines the globals
    /// that are easier to write in Lua than in C.
    static let prelude = """
        local host_print, find_module, random, randomseed, time, clock, rank_of = ...
        local concat, pack, unpack, select, tostring, type, error, load = table.concat, table.pack, table.unpack, select, tostring, type, error, load
        function print(...)
          local parts = {}
          for i = 1, select('#', ...) do parts[i] = tostring((select(i, ...))) end
          host_print(unpack(parts, 1, select('#', ...)))
        end
        local loaded = {}
        function require(name)
          if type(name) ~= "string" then
            error("bad argument #1 to 'require' (string expected, got " .. type(name) .. ")", 2)
          end
          local value = loaded[name]
          if value ~= nil then return value end
          local found, source, path = pcall(find_module, name)
          if not found then error((tostring(source):gsub("^sandbox:%d+: ", "")), 2) end
          local chunk, problem = load(source, "@" .. path, "t")
          if not chunk then error(problem, 0) end
          value = chunk(name, path)
          if value == nil then value = true end
          loaded[name] = value
          return value, path
        end
        math.random, math.randomseed = random, randomseed
        os.time, os.clock = time, clock
        -- pairs and next in a fixed order (numbers, then strings, then booleans, then the rest:
        -- tables and functions by the order the state made them, which is the same on every run),
        -- so a script's output depends neither on Lua's per-state hash seed nor on addresses.
        local next, sort, getmetatable, rawget, raw_pairs = next, table.sort, getmetatable, rawget, pairs
        local rank = { number = 1, string = 2, boolean = 3 }
        local ranks = {}
        local function before(a, b)
          local ta, tb = type(a), type(b)
          if ta ~= tb then
            local ra, rb = rank[ta] or 4, rank[tb] or 4
            if ra ~= rb then return ra < rb end
            return ta < tb
          end
          if ta == "number" or ta == "string" then return a < b end
          if ta == "boolean" then return b and not a end
          local ka, kb = ranks[a], ranks[b]
          if ka and kb then return ka < kb end
          if ka or kb then return ka ~= nil end
          return tostring(a) < tostring(b)
        end
        -- Every key of t in the fixed order.
        local function ordered_keys(t)
          local keys, n, kind, mixed = {}, 0, nil, false
          for k in next, t do
            n = n + 1
            keys[n] = k
            local tk = type(k)
            if kind == nil then kind = tk elseif tk ~= kind then mixed = true end
          end
          if mixed or (kind ~= "string" and kind ~= "number") then
            for j = 1, n do
              local k = keys[j]
              if rank[type(k)] == nil then ranks[k] = rank_of(k) end
            end
            sort(keys, before)
            ranks = {}
          else
            sort(keys)
          end
          return keys, n
        end
        function pairs(t)
          local mt = getmetatable(t)
          if mt ~= nil and (type(mt) ~= "table" or rawget(mt, "__pairs") ~= nil) then return raw_pairs(t) end
          if type(t) ~= "table" then return raw_pairs(t) end
          local keys = ordered_keys(t)
          local i = 0
          return function(tt)
            i = i + 1
            local k = keys[i]
            if k ~= nil then return k, rawget(tt, k) end
          end, t, nil
        end
        -- next in the same fixed order: a traversal keeps a snapshot of the keys, in a cache whose
        -- entries the collector may drop (then the next call takes a new one and finds its place).
        local raw_next = next
        local snapshots = setmetatable({}, { __mode = "kv" })
        local function snapshot(t)
          local keys, n = ordered_keys(t)
          local at = {}
          for j = 1, n do at[keys[j]] = j end
          local s = { keys = keys, at = at }
          snapshots[t] = s
          return s
        end
        -- (The global: the local `next` above stays Lua's own, for ordered_keys.)
        _ENV.next = function(t, k)
          if type(t) ~= "table" then return raw_next(t, k) end
          local s, i
          if k == nil then
            s, i = snapshot(t), 0
          else
            s = snapshots[t]
            i = s and s.at[k]
            if i == nil then
              s = snapshot(t)
              i = s.at[k]
              if i == nil then return raw_next(t, k) end
            end
          end
          local keys = s.keys
          while true do
            i = i + 1
            local key = keys[i]
            if key == nil then
              snapshots[t] = nil
              return nil
            end
            local v = rawget(t, key)
            if v ~= nil then return key, v end
          end
        end
        local create, resume, close = coroutine.create, coroutine.resume, coroutine.close
        function coroutine.wrap(f)
          local co = create(f)
          return function(...)
            local r = pack(resume(co, ...))
            if r[1] then return unpack(r, 2, r.n) end
            close(co)
            error(r[2], 0)
          end
        end
        """
}

extension LuaStack {
    /// Pushes the function a registry reference holds.
    @inlinable
    public func pushReference(_ ref: LuaFunctionRef) { pushRegistry(ref.ref) }

    /// Pushes the value a table reference holds.
    @inlinable
    public func pushReference(_ ref: LuaTableRef) { pushRegistry(ref.ref) }
}

/// Resolves `require` names to Lua files inside the allowed folders, refusing anything that
/// could leave them (`..`, absolute paths, symbolic links pointing out, bytecode).
public struct ModuleFinder: Sendable {
    /// The folders modules may come from, searched in order.
    public let folders: [String]
    /// The largest module file read, in bytes (checked before reading).
    public var maxBytes: Int

    /// A finder over `folders` reading at most `maxBytes` bytes a module.
    public init(folders: [String], maxBytes: Int = BoundedFile.maxSourceBytes) {
        self.folders = folders
        self.maxBytes = maxBytes
    }

    /// The source and display path of module `name`; throws `LuaArgumentError` saying why not.
    public func find(_ name: String) throws -> (source: String, displayPath: String) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
        let segments = name.split(separator: ".", omittingEmptySubsequences: false)
        guard !name.isEmpty, name.count <= 200, name.allSatisfy({ allowed.contains($0) }),
              segments.allSatisfy({ !$0.isEmpty })
        else {
            throw LuaArgumentError(position: 1, problem: "module name '\(name)' refused: use dotted names of letters, digits, '_' and '-' (no paths, no '..')",
                                    refusal: .module(name: name, .badName))
        }
        guard !folders.isEmpty else {
            throw LuaArgumentError(position: 1, problem: "module '\(name)' not found: this sandbox has no module folders",
                                    refusal: .module(name: name, .notFound(tried: [])))
        }
        let relative = segments.joined(separator: "/")
        var tried: [String] = []
        for folder in folders {
            for candidate in ["\(relative).lua", "\(relative)/init.lua"] {
                let path = folder.hasSuffix("/") ? folder + candidate : folder + "/" + candidate
                tried.append(path)
                guard BoundedFile.realPath(path) != nil else { continue }
                let data: [UInt8]
                do {
                    data = try BoundedFile.readInside(folder, candidate, maxBytes: maxBytes)
                } catch {
                    throw LuaArgumentError(position: 1, problem: "module '\(name)' refused: \(error)", refusal: .file(error))
                }
                guard data.first != 0x1B else {
                    throw LuaArgumentError(position: 1, problem: "module '\(name)' (\(path)) is precompiled bytecode; only source text is loaded",
                                        refusal: .module(name: name, .bytecode(path)))
                }
                switch LuaSourceText.decode(data) {
                case .success(let text): return (text, path)
                case .failure(let bad): throw LuaArgumentError(position: 1, problem: "module '\(name)' refused: " + bad.message(path))
                }
            }
        }
        throw LuaArgumentError(position: 1, problem: "module '\(name)' not found; tried \(tried.joined(separator: ", "))",
                                refusal: .module(name: name, .notFound(tried: tried)))
    }
}
