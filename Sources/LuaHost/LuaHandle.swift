public import CLua
public import CLuaSupport

/// What `LuaHandle.callHealth` found, and the stack top to restore with `endCall`.
public struct HealthCall {
    public enum Answer: Int32 {
        /// nil: no answer.
        case noAnswer = 0
        /// A plain table whose `applicationHealthState` is "Healthy".
        case healthy = 1
        /// ... is "Unhealthy".
        case unhealthy = 2
        /// Anything else, on top of the stack for the general readers.
        case other = 3
    }

    public let answer: Answer
    /// `customMetrics` (or its absence) went to `latest[slot]`.
    public let metricsKept: Bool
    @usableFromInline let base: Int32
    /// Lua's status when the call failed (`LuaState.failure(of:function:)` says how), else 0.
    @usableFromInline let status: Int32
    /// The call failed: its message is on top.
    public var failed: Bool { status != 0 }
    /// `status` when the stack had no room for the call.
    @usableFromInline static let noRoom: Int32 = -1

    @usableFromInline init(answer: Answer, metricsKept: Bool, base: Int32, status: Int32 = 0) {
        self.answer = answer
        self.metricsKept = metricsKept
        self.base = base
        self.status = status
    }
}

/// A state's raw pointer for the probe's hot path: a call through it touches no reference-counted
/// object (a `LuaState` method would retain the state for the call). Valid while its `LuaState`
/// lives, on the state's thread; `LuaState.failure(of:function:)` explains a failed call.
public struct LuaHandle {
    @usableFromInline let L: OpaquePointer

    @usableFromInline init(L: OpaquePointer) { self.L = L }

    /// The health call's fast path, one C call per probe: calls `function(vm, now)` through the
    /// funnel and reads the usual answer raw (the state by its interned string; with `latest`,
    /// `customMetrics` copied into `latest[slot]`). The result stays on top until `endCall`;
    /// anything but the usual answer is `.other`, for `LuaState.readTop`'s general readers. A
    /// failed call comes back with `failed` set, its message on top.
    @inlinable
    public func callHealth(_ function: LuaFunctionRef, vm: LuaTableRef, nowMillis: Int, latest: LuaTableRef?, slot: Int) -> HealthCall {
        let base = lua_gettop(L)
        guard lua_checkstack(L, 8) != 0 else { return HealthCall(answer: .other, metricsKept: false, base: base, status: HealthCall.noRoom) }
        let code = rh_call_health(L, function.ref, vm.ref, Int64(nowMillis), latest?.ref ?? CLUA_NOREF, Int64(slot))
        guard code >= 0 else { return HealthCall(answer: .other, metricsKept: false, base: base, status: -code) }
        return HealthCall(answer: HealthCall.Answer(rawValue: code & 3) ?? .other, metricsKept: code & RH_HEALTH_METRICS_KEPT != 0, base: base)
    }

    /// Drops what a call left on the stack.
    @inlinable
    public func endCall(_ call: HealthCall) { lua_settop(L, call.base) }
}
