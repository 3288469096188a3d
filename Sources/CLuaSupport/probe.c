/* The health call's fast path: one C function per probe pushes the function, the instance's
 * `vm` table and the time, calls through the funnel and reads the usual answer
 * ({ applicationHealthState = "Healthy" | "Unhealthy", customMetrics = ... }) without leaving C.
 * Anything else is left on the stack for the Swift host's general reader. */
#include "host.h"

#include <string.h>

/* The strings the fast path compares and looks up with, interned once per state: Lua interns
 * short strings, so an answer's "Healthy" is the same object. The two keys live in the main
 * stack's reserved slots (one push to use them); the two states are anchored in the registry. */
static const char *const probe_strings[RH_PROBE_STRING_COUNT] = {
    "applicationHealthState", "customMetrics", "Healthy", "Unhealthy",
};

void rh_intern_probe_strings(rh_host *h) {
    for (int i = 0; i < RH_PROBE_STRING_COUNT; i++) {
        lua_pushstring(h->L, probe_strings[i]);
        h->probe_pointers[i] = lua_topointer(h->L, -1);
        if (i >= RH_PROBE_HEALTHY) h->probe_refs[i] = luaL_ref(h->L, LUA_REGISTRYINDEX);
    }
}

static int same_ignoring_ascii_case(const char *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x >= 'A' && x <= 'Z') x += 32;
        if (y >= 'A' && y <= 'Z') y += 32;
        if (x != y) return 0;
    }
    return 1;
}

/* Whether table `t` has a string key spelled "customMetrics" in another casing (the wire's keys
 * are case-insensitive; the Swift reader then picks among them). */
static int has_other_metrics_key(lua_State *L, int t) {
    static const char name[] = "customMetrics";
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
        lua_pop(L, 1);
        size_t length = 0;
        const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &length) : NULL;
        if (key && length == sizeof name - 1 && same_ignoring_ascii_case(key, name, length)) {
            lua_pop(L, 1);
            return 1;
        }
    }
    return 0;
}

int rh_call_health(lua_State *L, int function_ref, int vm_ref, long long now_ms, int latest_ref, long long slot) {
    if (!lua_checkstack(L, 8)) return RH_HEALTH_NO_ROOM;
    rh_host *h = host_of(L);
    int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, function_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm_ref);
    if (now_ms % 1000 == 0) lua_pushinteger(L, (lua_Integer)(now_ms / 1000));
    else lua_pushnumber(L, (lua_Number)now_ms / 1000);
    int status = rh_pcall(L, 2, 1, function_ref);
    if (status != LUA_OK) return -status;
    int t = base + 1;
    switch (lua_type(L, t)) {
    case LUA_TNIL:
        lua_settop(L, base);
        return RH_HEALTH_NIL;
    case LUA_TTABLE: break;
    default: return RH_HEALTH_OTHER | RH_HEALTH_LEFT;
    }
    /* Raw reads, as the host's general reader does: a metatable changes nothing here. */
    lua_pushvalue(L, RH_STATE_KEY_SLOT);
    const void *state = lua_rawget(L, t) == LUA_TSTRING ? lua_topointer(L, -1) : NULL;
    int code = state == h->probe_pointers[RH_PROBE_HEALTHY] ? RH_HEALTH_HEALTHY
             : state == h->probe_pointers[RH_PROBE_UNHEALTHY] ? RH_HEALTH_UNHEALTHY : RH_HEALTH_OTHER;
    if (code == RH_HEALTH_OTHER || latest_ref == LUA_NOREF) {
        lua_settop(L, t);
        return code | RH_HEALTH_LEFT;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, latest_ref);
    lua_pushvalue(L, RH_METRICS_KEY_SLOT);
    if (lua_rawget(L, t) == LUA_TNIL && has_other_metrics_key(L, t)) {
        lua_settop(L, t);
        return code | RH_HEALTH_LEFT;
    }
    lua_rawseti(L, -2, (lua_Integer)slot);
    lua_settop(L, base);
    return code | RH_HEALTH_METRICS_KEPT;
}
