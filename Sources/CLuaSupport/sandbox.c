/* The sandbox: an allowlist of the standard library with safe wrappers. */
#include "host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* load(chunk [, chunkname [, mode [, env]]]) for text chunks only. */
static int sandbox_load(lua_State *L) {
    size_t len;
    if (lua_type(L, 1) != LUA_TSTRING)
        return luaL_error(L, "load: only string chunks are allowed in the sandbox (got %s)", luaL_typename(L, 1));
    const char *s = lua_tolstring(L, 1, &len);
    const char *name = luaL_optstring(L, 2, "=(load)");
    const char *mode = luaL_optstring(L, 3, "t");
    if (strchr(mode, 't') == NULL)
        return luaL_error(L, "load: mode '%s' refused: the sandbox loads text chunks only", mode);
    int has_env = !lua_isnone(L, 4);
    int status = luaL_loadbufferx(L, s, len, name, "t");
    if (status != LUA_OK) {
        luaL_pushfail(L);
        lua_insert(L, -2);
        return 2;
    }
    if (has_env) {
        lua_pushvalue(L, 4);
        if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
    }
    return 1;
}

/* setmetatable that refuses finalizers: a __gc could run outside any budgeted call. */
static int sandbox_setmetatable(lua_State *L) {
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return luaL_error(L, "setmetatable: __gc metamethods are not allowed in the sandbox");
        lua_pop(L, 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int sandbox_collectgarbage(lua_State *L) {
    static const char *const allowed[] = {"collect", "count", "step", "isrunning", NULL};
    luaL_checkoption(L, 1, "collect", allowed);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* coroutine.resume / coroutine.close: the coroutine joins the call's chain while it runs, so the
 * watchdog arms it too, and it gets the hook state of the call when it starts. */
static int sandbox_resume_like(lua_State *L) {
    rh_host *h = host_of(L);
    lua_State *co = lua_tothread(L, 1);
    int saved = h->depth;
    int joined = 0;
    if (co && saved > 0 && saved < RH_CHAIN_MAX) {
        h->chain[saved] = co;
        h->depth = saved + 1;
        joined = 1;
        if (h->armed)
            lua_sethook(co, rh_budget_hook, LUA_MASKCOUNT, h->stop == RH_STOP_NONE ? RH_STEP : 1);
        else
            rh_disarm(co);
    } else if (co && saved >= RH_CHAIN_MAX) {
        return luaL_error(L, "coroutines nested deeper than %d", RH_CHAIN_MAX);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    if (joined) h->depth = saved;
    if (status != LUA_OK) return lua_error(L);
    return lua_gettop(L);
}

static void copy_fields(lua_State *L, int from, int to, const char *const *names) {
    for (; *names; names++) {
        lua_getfield(L, from, *names);
        lua_setfield(L, to, *names);
    }
}

static void wrap_field(lua_State *L, int table, const char *name, lua_CFunction wrapper) {
    table = lua_absindex(L, table);
    lua_getfield(L, table, name);
    lua_pushcclosure(L, wrapper, 1);
    lua_setfield(L, table, name);
}

static int open_sandbox(lua_State *L) {
    static const char *const base[] = {"assert", "error", "ipairs", "next", "pairs", "pcall", "rawequal",
        "rawget", "rawlen", "rawset", "select", "tonumber", "tostring", "type", "xpcall", "_VERSION",
        "getmetatable", "setmetatable", "collectgarbage", NULL};
    static const char *const strings[] = {"byte", "char", "find", "format", "gmatch", "gsub", "len",
        "lower", "match", "rep", "reverse", "sub", "upper", "pack", "packsize", "unpack", NULL};
    static const char *const tables[] = {"concat", "insert", "move", "pack", "remove", "sort", "unpack", NULL};
    static const char *const maths[] = {"abs", "ceil", "cos", "deg", "exp", "floor", "fmod", "huge", "log",
        "max", "maxinteger", "min", "mininteger", "modf", "pi", "rad", "sin", "sqrt", "tan", "tointeger",
        "type", "ult", "acos", "asin", "atan", NULL};
    static const char *const utf8s[] = {"char", "charpattern", "codes", "codepoint", "len", "offset", NULL};
    static const char *const coroutines[] = {"create", "isyieldable", "running", "status", "yield",
        "resume", "close", NULL};
    static const char *const oss[] = {"difftime", NULL};

    luaL_requiref(L, LUA_GNAME, luaopen_base, 0);       /* 1: the full base library */
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 0); /* 2 */
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 0);  /* 3 */
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 0);  /* 4 */
    luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 0);  /* 5 */
    luaL_requiref(L, LUA_COLIBNAME, luaopen_coroutine, 0); /* 6 */
    luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);      /* 7 */

    lua_newtable(L); /* 8: the sandbox globals */
    int g = 8;
    copy_fields(L, 1, g, base);
    lua_pushvalue(L, g);
    lua_setfield(L, g, "_G");
    wrap_field(L, g, "setmetatable", sandbox_setmetatable);
    wrap_field(L, g, "collectgarbage", sandbox_collectgarbage);
    lua_pushcfunction(L, sandbox_load);
    lua_setfield(L, g, "load");

    struct { int from; const char *name; const char *const *fields; } libs[] = {
        {2, "string", strings}, {3, "table", tables}, {4, "math", maths}, {5, "utf8", utf8s},
        {6, "coroutine", coroutines}, {7, "os", oss}};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        lua_newtable(L);
        copy_fields(L, libs[i].from, lua_gettop(L), libs[i].fields);
        lua_setfield(L, g, libs[i].name);
    }
    lua_getfield(L, g, "coroutine");
    wrap_field(L, -1, "resume", sandbox_resume_like);
    wrap_field(L, -1, "close", sandbox_resume_like);
    lua_pop(L, 1);

    /* Strings index the sandbox's string table, not the full one (no string.dump via ("").dump). */
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_getfield(L, g, "string");
    lua_setfield(L, -2, "__index");
    lua_pop(L, 2);

    /* The sandbox table becomes the globals every chunk loaded from now on sees. */
    lua_pushvalue(L, g);
    lua_rawseti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    /* Forget the full libraries: package.loaded would otherwise still reach them. */
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_settop(L, 0);
    return 0;
}

int rh_open_sandbox(lua_State *L) {
    rh_host *h = host_of(L);
    int zone = h->protected_zone;
    h->protected_zone = 0;
    lua_pushcfunction(L, open_sandbox);
    int status = lua_pcall(L, 0, 0, 0);
    if (status != LUA_OK) {
        fprintf(stderr, "rehearse: cannot build the Lua sandbox: %s\n", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    h->protected_zone = zone;
    return status;
}
