public import CLua
public import CLuaSupport

/// What `LuaHandle.callHealth` found, and whether its result is left on top for `endCall`.
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
    /// The result is on top of the stack (for `LuaState.readTop`) until `endCall`.
    @usableFromInline let leftOnTop: Bool
    /// Lua's status when the call failed (`LuaState.failure(of:function:)` says how), else 0.
    @usableFromInline let status: Int32
    /// The call failed: its message is on top.
    public var failed: Bool { status != 0 }
    /// `status` when the stack had no room for the call.
    @usableFromInline static let noRoom: Int32 = -1

    @inlinable init(code: Int32) {
        if code < 0 {
            answer = .other
            metricsKept = false
            leftOnTop = false
            status = code == RH_HEALTH_NO_ROOM ? Self.noRoom : -code
        } else {
            answer = Answer(rawValue: code & 3) ?? .other
            metricsKept = code & RH_HEALTH_METRICS_KEPT != 0
            leftOnTop = code & RH_HEALTH_LEFT != 0
            status = 0
        }
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
    /// `customMetrics` copied into `latest[slot]`), leaving the stack as it was. Anything but the
    /// usual answer is `.other` and stays on top for `LuaState.readTop`'s general readers until
    /// `endCall`. A failed call comes back with `failed` set, its message on top.
    @inlinable
    public func callHealth(_ function: LuaFunctionRef, vm: LuaTableRef, nowMillis: Int, latest: LuaTableRef?, slot: Int) -> HealthCall {
        HealthCall(code: rh_call_health(L, function.ref, vm.ref, Int64(nowMillis), latest?.ref ?? CLUA_NOREF, Int64(slot)))
    }

    /// Drops what a call left on the stack.
    @inlinable
    public func endCall(_ call: HealthCall) {
        if call.leftOnTop { clua_pop(L, 1) }
    }
}
