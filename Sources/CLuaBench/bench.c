#define _GNU_SOURCE
#include "CLuaBench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CLuaSupport.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int traceback(lua_State *L) {
    luaL_traceback(L, L, lua_tostring(L, 1), 1);
    return 1;
}

/* Reads the state string and both metrics of the result table on top, and pops it (with the
 * customMetrics value read last). */
static void read_result(lua_State *L, clb_result *r) {
    lua_getfield(L, -1, "applicationHealthState");
    const char *state = lua_tostring(L, -1);
    if (state && strcmp(state, "Unhealthy") == 0) r->unhealthy++;
    lua_pop(L, 1);
    if (lua_getfield(L, -1, "customMetrics") == LUA_TTABLE) {
        if (lua_getfield(L, -1, "rollingUpgrade") == LUA_TTABLE) {
            lua_getfield(L, -1, "PhaseOrderingNumber");
            r->phase_sum += lua_tointeger(L, -1);
            lua_getfield(L, -2, "SkipUpgrade");
            r->skipped += lua_toboolean(L, -1);
            lua_pop(L, 2);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 2);
}

static lua_State *open_script(const char *script) {
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    if (luaL_loadstring(L, script) != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
        lua_close(L);
        return NULL;
    }
    return L;
}

clb_result clb_c_loop(const char *script, int64_t calls) {
    clb_result r = {-1, 0, 0, 0};
    lua_State *L = open_script(script);
    if (!L) return r;
    lua_getglobal(L, "health");
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    double start = now_ns();
    for (int64_t i = 0; i < calls; i++) {
        lua_pushcfunction(L, traceback);
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
        lua_pushinteger(L, i % 1000);
        lua_pushinteger(L, i);
        if (lua_pcall(L, 2, 1, -4) != LUA_OK) {
            lua_close(L);
            return r;
        }
        read_result(L, &r);
        lua_pop(L, 1); /* the message handler */
    }
    r.ns_per_call = (now_ns() - start) / (double)calls;
    lua_close(L);
    return r;
}

clb_result clb_c_vm_loop(const char *script, const char *function_name, int64_t calls, int instances) {
    clb_result r = {-1, 0, 0, 0};
    lua_State *L = open_script(script);
    if (!L || instances <= 0) {
        if (L) lua_close(L);
        return r;
    }
    lua_getglobal(L, function_name);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_createtable(L, instances, 0);
    for (int i = 0; i < instances; i++) {
        lua_createtable(L, 0, 6);
        lua_pushinteger(L, i);
        lua_setfield(L, -2, "id");
        lua_pushfstring(L, "bench_%d", i);
        lua_setfield(L, -2, "name");
        lua_pushfstring(L, "%d", i % 3 + 1);
        lua_setfield(L, -2, "zone");
        lua_createtable(L, 0, 1);
        lua_pushinteger(L, 1);
        lua_setfield(L, -2, "version");
        lua_setfield(L, -2, "model");
        lua_newtable(L);
        lua_setfield(L, -2, "state");
        lua_rawseti(L, -2, i + 1);
    }
    int vms = luaL_ref(L, LUA_REGISTRYINDEX);
    double start = now_ns();
    for (int64_t i = 0; i < calls; i++) {
        lua_pushcfunction(L, traceback);
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
        lua_rawgeti(L, LUA_REGISTRYINDEX, vms);
        lua_rawgeti(L, -1, (lua_Integer)(i % instances) + 1);
        lua_remove(L, -2);
        lua_pushinteger(L, (lua_Integer)(i / instances) * 5);
        if (lua_pcall(L, 2, 1, -4) != LUA_OK) {
            lua_close(L);
            return r;
        }
        read_result(L, &r);
        lua_pop(L, 1); /* the message handler */
    }
    r.ns_per_call = (now_ns() - start) / (double)calls;
    lua_close(L);
    return r;
}

static const char *lua_loop =
    "local calls = ...\n"
    "local unhealthy, phases, skipped = 0, 0, 0\n"
    "for i = 0, calls - 1 do\n"
    "  local r = health(i % 1000, i)\n"
    "  if r.applicationHealthState == 'Unhealthy' then unhealthy = unhealthy + 1 end\n"
    "  local m = r.customMetrics\n"
    "  if m then local ru = m.rollingUpgrade\n"
    "    if ru then phases = phases + ru.PhaseOrderingNumber\n"
    "      if ru.SkipUpgrade then skipped = skipped + 1 end end end\n"
    "end\n"
    "return unhealthy, phases, skipped\n";

clb_result clb_lua_loop(const char *script, int64_t calls) {
    clb_result r = {-1, 0, 0, 0};
    lua_State *L = open_script(script);
    if (!L) return r;
    if (luaL_loadstring(L, lua_loop) != LUA_OK) {
        lua_close(L);
        return r;
    }
    lua_pushinteger(L, calls);
    double start = now_ns();
    if (lua_pcall(L, 1, 3, 0) == LUA_OK) {
        r.ns_per_call = (now_ns() - start) / (double)calls;
        r.unhealthy = lua_tointeger(L, -3);
        r.phase_sum = lua_tointeger(L, -2);
        r.skipped = lua_tointeger(L, -1);
    }
    lua_close(L);
    return r;
}

/* No Swift function is ever registered on the floor's state. */
static int no_dispatch(lua_State *L, void *closure) {
    (void)closure;
    lua_pushliteral(L, "no host functions on the floor");
    return RH_SWIFT_ERROR;
}

/* One `vm` table as the scenario runtime builds it: id, name, faultDomain, updateDomain, an empty
 * state, startedAt, zone and the shared model table. */
static void push_vm(lua_State *L, int i, int model) {
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, i);
    lua_setfield(L, -2, "id");
    lua_pushfstring(L, "bench_%d", i);
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, 0);
    lua_setfield(L, -2, "faultDomain");
    lua_pushinteger(L, i % 5);
    lua_setfield(L, -2, "updateDomain");
    lua_newtable(L);
    lua_setfield(L, -2, "state");
    lua_pushinteger(L, 0);
    lua_setfield(L, -2, "startedAt");
    lua_pushfstring(L, "%d", i % 3 + 1);
    lua_setfield(L, -2, "zone");
    lua_rawgeti(L, LUA_REGISTRYINDEX, model);
    lua_setfield(L, -2, "model");
}

/* A `vm.model` table kept in the registry: { version = version, image = image }. */
static int model_table(lua_State *L, int version, const char *image) {
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, version);
    lua_setfield(L, -2, "version");
    lua_pushstring(L, image);
    lua_setfield(L, -2, "image");
    return luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Brings vm table `vm` (on top) up to date with an upgrade that ended at `ended_ms`, as the
 * scenario runtime does: the new model, the restart time and the last operation (its fields set
 * in the runtime's order). */
static void apply_upgrade(lua_State *L, int model, int64_t ended_ms) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, model);
    lua_setfield(L, -2, "model");
    lua_pushinteger(L, (lua_Integer)(ended_ms / 1000));
    lua_setfield(L, -2, "startedAt");
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)(ended_ms / 1000));
    lua_setfield(L, -2, "endedAt");
    lua_pushliteral(L, "upgrade");
    lua_setfield(L, -2, "kind");
    lua_pushliteral(L, "succeeded");
    lua_setfield(L, -2, "outcome");
    lua_setfield(L, -2, "lastOperation");
}

clb_result clb_floor_loop(const char *script, const char *function_name, int64_t calls, int instances, clb_limits limits,
                          const int64_t *upgraded_ms) {
    clb_result r = {-1, 0, 0, 0};
    if (instances <= 0) return r;
    rh_host *h = rh_host_new(limits.memory_bytes, no_dispatch);
    if (!h) return r;
    lua_State *L = rh_host_state(h);
    rh_host_set_budget(h, limits.instructions, 1, 0);
    rh_host_set_backstop(h, limits.backstop_ms);
    rh_host_set_run_backstop(h, limits.run_backstop_ms);
    rh_host_set_run_budget(h, limits.run_instructions);
    if (rh_open_sandbox(L) != LUA_OK || luaL_loadbufferx(L, script, strlen(script), "=floor", "t") != LUA_OK
        || rh_pcall(L, 0, 0, LUA_NOREF) != LUA_OK) {
        rh_host_free(h);
        return r;
    }
    lua_getglobal(L, function_name);
    int function = luaL_ref(L, LUA_REGISTRYINDEX);
    int model = model_table(L, 1, "v1");
    int model2 = model_table(L, 2, "v2");
    int *vms = malloc(sizeof(int) * (size_t)instances);
    char *pending = calloc((size_t)instances, 1);
    if (!vms || !pending) {
        free(vms);
        free(pending);
        rh_host_free(h);
        return r;
    }
    for (int i = 0; i < instances; i++) {
        push_vm(L, i, model);
        vms[i] = luaL_ref(L, LUA_REGISTRYINDEX);
        pending[i] = upgraded_ms && upgraded_ms[i] >= 0;
    }
    lua_createtable(L, instances, 0);
    int latest = luaL_ref(L, LUA_REGISTRYINDEX);
    int base = lua_gettop(L);
    double start = now_ns();
    for (int64_t i = 0; i < calls; i++) {
        int id = (int)(i % instances);
        int64_t now_ms = (i / instances) * 5000;
        if (pending[id] && now_ms >= upgraded_ms[id]) {
            lua_rawgeti(L, LUA_REGISTRYINDEX, vms[id]);
            apply_upgrade(L, model2, upgraded_ms[id]);
            lua_pop(L, 1);
            pending[id] = 0;
        }
        lua_rawgeti(L, LUA_REGISTRYINDEX, function);
        lua_rawgeti(L, LUA_REGISTRYINDEX, vms[id]);
        lua_pushinteger(L, (lua_Integer)(now_ms / 1000));
        if (rh_pcall(L, 2, 1, function) != LUA_OK) {
            free(vms);
            free(pending);
            rh_host_free(h);
            return r;
        }
        lua_getfield(L, -1, "applicationHealthState");
        const char *state = lua_tostring(L, -1);
        if (state && strcmp(state, "Unhealthy") == 0) r.unhealthy++;
        else if (!state || strcmp(state, "Healthy") != 0) r.skipped++;
        lua_pop(L, 1);
        lua_rawgeti(L, LUA_REGISTRYINDEX, latest);
        lua_getfield(L, -2, "customMetrics");
        lua_rawseti(L, -2, id + 1);
        lua_settop(L, base);
    }
    r.ns_per_call = (now_ns() - start) / (double)calls;
    free(vms);
    free(pending);
    rh_host_free(h);
    return r;
}
