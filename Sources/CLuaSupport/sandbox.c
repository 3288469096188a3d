/* The sandbox: an allowlist of the standard library with safe wrappers. */
#include "host.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Raises the refusal of a sandbox rule as luaL_error would (the caller's place, then the
 * message), noting the rule and the message for the host to read once the call fails. */
static int refuse(lua_State *L, rh_refusal rule, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const char *text = lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    rh_host *h = host_of(L);
    h->refusal = rule;
    snprintf(h->refusal_text, sizeof h->refusal_text, "%s", text);
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
    return lua_error(L);
}

/* load(chunk [, chunkname [, mode [, env]]]) for text chunks only; compiling is charged one
 * unit per byte. */
static int sandbox_load(lua_State *L) {
    size_t len;
    if (lua_type(L, 1) != LUA_TSTRING)
        return refuse(L, RH_REFUSAL_TEXT_CHUNKS, "load: only string chunks are allowed in the sandbox (got %s)", luaL_typename(L, 1));
    const char *s = lua_tolstring(L, 1, &len);
    const char *name = luaL_optstring(L, 2, "=(load)");
    const char *mode = luaL_optstring(L, 3, "t");
    if (strchr(mode, 't') == NULL)
        return refuse(L, RH_REFUSAL_TEXT_CHUNKS, "load: mode '%s' refused: the sandbox loads text chunks only", mode);
    rh_charge(L, (lua_Integer)len);
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

/* Runs the wrapped original (upvalue 1, a C function of the standard library) in this frame, on
 * this call's arguments: its errors then name the script's line, as if it had been called
 * directly. */
static int call_original(lua_State *L) {
    lua_CFunction original = lua_tocfunction(L, lua_upvalueindex(1));
    return original(L);
}

/* A weak-keyed table whose values are strong (an ephemeron table) makes one collection
 * quadratic in the length of a chain of them: the sandbox refuses that mode. */
static int is_ephemeron_mode(lua_State *L, int index) {
    if (lua_type(L, index) != LUA_TSTRING) return 0;
    const char *mode = lua_tostring(L, index);
    return strchr(mode, 'k') != NULL && strchr(mode, 'v') == NULL;
}

static int refuse_ephemeron(lua_State *L) {
    return refuse(L, RH_REFUSAL_WEAK_KEYS, "weak-keyed tables (__mode = 'k') are not allowed in the sandbox: collecting them "
                         "can take time no budget bounds; use __mode = 'kv' or strong keys");
}

/* setmetatable that refuses finalizers (a __gc could run outside any budgeted call) and
 * ephemeron tables. A script's metatable may hold metamethods: calls are counted by the hook
 * from now on (straight.c). */
static int sandbox_setmetatable(lua_State *L) {
    if (lua_type(L, 2) == LUA_TTABLE) {
        host_of(L)->metatables = 1;
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return refuse(L, RH_REFUSAL_FINALIZER, "setmetatable: __gc metamethods are not allowed in the sandbox");
        lua_pop(L, 1);
        lua_pushliteral(L, "__mode");
        lua_rawget(L, 2);
        if (is_ephemeron_mode(L, -1)) return refuse_ephemeron(L);
        lua_pop(L, 1);
    }
    return call_original(L);
}

/* rawset that refuses writing an ephemeron __mode (into what may already be a metatable). */
static int sandbox_rawset(lua_State *L) {
    if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "__mode") == 0 && is_ephemeron_mode(L, 3))
        return refuse_ephemeron(L);
    return call_original(L);
}

/* getmetatable: a metatable a script holds (the strings' one included) may gain metamethods. */
static int sandbox_getmetatable(lua_State *L) {
    int n = call_original(L);
    if (n > 0 && lua_type(L, -1) == LUA_TTABLE) host_of(L)->metatables = 1;
    return n;
}

static int sandbox_collectgarbage(lua_State *L) {
    static const char *const allowed[] = {"collect", "count", "step", "isrunning", NULL};
    luaL_checkoption(L, 1, "collect", allowed);
    rh_note_reached(L, 1);
    return call_original(L);
}

/* tostring that names tables, functions, threads and userdata by the order in which they were
 * first shown ("table: #1") instead of by address, so output is the same on every run. */
static int sandbox_tostring(lua_State *L) {
    luaL_checkany(L, 1);
    int t = lua_type(L, 1);
    if (t != LUA_TTABLE && t != LUA_TFUNCTION && t != LUA_TTHREAD && t != LUA_TUSERDATA && t != LUA_TLIGHTUSERDATA)
        return call_original(L);
    if (luaL_getmetafield(L, 1, "__tostring") != LUA_TNIL) {
        lua_pop(L, 1);
        return call_original(L);
    }
    lua_settop(L, 1);
    const char *kind = luaL_typename(L, 1);
    if (luaL_getmetafield(L, 1, "__name") == LUA_TSTRING) kind = lua_tostring(L, -1);
    else lua_pushnil(L);
    lua_pushvalue(L, 1);
    if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNUMBER) {
        lua_pop(L, 1);
        lua_Integer next = lua_tointeger(L, lua_upvalueindex(3)) + 1;
        lua_pushinteger(L, next);
        lua_copy(L, -1, lua_upvalueindex(3));
        lua_pushvalue(L, 1);
        lua_pushvalue(L, -2);
        lua_rawset(L, lua_upvalueindex(2));
    }
    lua_pushfstring(L, "%s: #%I", kind, (LUAI_UACINT)lua_tointeger(L, -1));
    return 1;
}

/* string.format without %p, and with %s of a table, function or thread shown by the sandbox's
 * tostring (upvalue 2): an address differs between runs. */
static int sandbox_format(lua_State *L) {
    const char *fmt = luaL_checkstring(L, 1);
    int arg = 1;
    for (const char *p = strchr(fmt, '%'); p; p = strchr(p + 1, '%')) {
        const char *q = p + 1;
        if (*q == '%') { p = q; continue; }
        arg++;
        while (*q && strchr("-+ #0123456789.", *q)) q++;
        if (*q == 'p') return refuse(L, RH_REFUSAL_FORMAT_POINTER, "string.format: '%%p' is not available in the sandbox (addresses differ between runs)");
        int t = lua_type(L, arg);
        if (*q == 's' && (t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TTHREAD || t == LUA_TUSERDATA || t == LUA_TLIGHTUSERDATA)) {
            lua_pushvalue(L, lua_upvalueindex(2));
            lua_pushvalue(L, arg);
            lua_call(L, 1, 1);
            lua_replace(L, arg);
        }
    }
    return call_original(L);
}

static lua_Integer saturating_product(lua_Integer a, lua_Integer b) {
    if (a <= 0 || b <= 0) return 0;
    return a > LUA_MAXINTEGER / b ? LUA_MAXINTEGER : a * b;
}

/* string.rep(s, n [, sep]): an empty piece returns at once (5.4.4 would loop n times copying
 * nothing). Any other piece adds at least a byte a copy, so the memory cap bounds the loop. */
static int sandbox_rep(lua_State *L) {
    size_t l, lsep = 0;
    luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &lsep);
    if (n <= 0 || l + lsep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    return call_original(L);
}

static lua_Integer span(lua_Integer from, lua_Integer to) {
    if (to < from) return 0;
    if (from < 0 && to > LUA_MAXINTEGER + from) return LUA_MAXINTEGER;
    return to - from + 1;
}

/* table.move(a1, f, e, t [, a2]): one unit per element moved. */
static int sandbox_move(lua_State *L) {
    lua_Integer f = luaL_checkinteger(L, 2);
    lua_Integer e = luaL_checkinteger(L, 3);
    rh_charge(L, span(f, e));
    return call_original(L);
}

/* table.insert(t, pos, v) and table.remove(t, pos): one unit per element shifted. */
static int sandbox_shift(lua_State *L) {
    int positional = lua_toboolean(L, lua_upvalueindex(2)) ? lua_gettop(L) >= 2 : lua_gettop(L) == 3;
    int isnum = 0;
    lua_Integer pos = lua_tointegerx(L, 2, &isnum);
    if (positional && isnum && lua_type(L, 1) == LUA_TTABLE) {
        lua_Integer n = luaL_len(L, 1);
        /* Only a position Lua accepts ([1, n + 1]) shifts anything; any other is left to the
         * original, which raises the argument error a script's pcall can catch. */
        if (pos >= 1 && pos - 1 <= n) rh_charge(L, span(pos, n));
    }
    return call_original(L);
}

/* table.concat(t [, sep [, i [, j]]]) and table.unpack(t [, i [, j]]): one unit per element. */
static int sandbox_range(lua_State *L) {
    int first = lua_toboolean(L, lua_upvalueindex(2)) ? 3 : 2; /* concat's i is argument 3 */
    if (lua_type(L, 1) == LUA_TTABLE || !lua_isnoneornil(L, first + 1)) {
        lua_Integer i = luaL_optinteger(L, first, 1);
        lua_Integer j = lua_isnoneornil(L, first + 1) ? luaL_len(L, 1) : luaL_checkinteger(L, first + 1);
        rh_charge(L, span(i, j));
    }
    return call_original(L);
}

/* table.sort(t [, comp]): n log2 n units for the comparisons (a Lua comparator is counted too). */
static int sandbox_sort(lua_State *L) {
    if (lua_type(L, 1) == LUA_TTABLE) {
        lua_Integer n = luaL_len(L, 1);
        lua_Integer log = 1;
        while (log < 63 && ((lua_Integer)1 << log) < n) log++;
        rh_charge(L, saturating_product(n, log));
    }
    return call_original(L);
}

/* coroutine.resume / coroutine.close: the coroutine joins the call's chain while it runs, so the
 * watchdog arms it too. Its hook counter is kept across resumes (lua_sethook would reset it and
 * let every resume run up to a step uncounted); a coroutine first counted in this call pays one
 * step up front for the same reason. */
static int sandbox_resume_like(lua_State *L) {
    rh_host *h = host_of(L);
    lua_State *co = lua_tothread(L, 1);
    int saved = h->depth;
    int joined = 0;
    if (co && saved > 0 && saved < RH_CHAIN_MAX) {
        h->chain[saved] = co;
        h->depth = saved + 1;
        joined = 1;
        if (h->armed) {
            int count = h->stop == RH_STOP_NONE ? rh_coroutine_mark(h) : 1;
            if (lua_gethook(co) != rh_budget_hook || lua_gethookcount(co) != count) {
                if (count != 1) rh_charge(L, h->mark);
                lua_sethook(co, rh_budget_hook, LUA_MASKCOUNT, count);
            }
        } else if (lua_gethook(co) != NULL) {
            rh_disarm(co);
        }
    } else if (co && saved >= RH_CHAIN_MAX) {
        return refuse(L, RH_REFUSAL_COROUTINE_DEPTH, "coroutines nested deeper than %d", RH_CHAIN_MAX);
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

/* Replaces table.name with `wrapper`, whose upvalue 1 is the original and upvalue 2 `flag`. */
static void wrap_field_flag(lua_State *L, int table, const char *name, lua_CFunction wrapper, int flag) {
    table = lua_absindex(L, table);
    lua_getfield(L, table, name);
    lua_pushboolean(L, flag);
    lua_pushcclosure(L, wrapper, 2);
    lua_setfield(L, table, name);
}

static void wrap_field(lua_State *L, int table, const char *name, lua_CFunction wrapper) {
    wrap_field_flag(L, table, name, wrapper, 0);
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
    wrap_field(L, g, "getmetatable", sandbox_getmetatable);
    wrap_field(L, g, "collectgarbage", sandbox_collectgarbage);
    wrap_field(L, g, "rawset", sandbox_rawset);
    /* tostring: upvalues are the original, a weak-keyed map of shown objects to their number
     * (its values are numbers, so it is no ephemeron chain) and the last number given. */
    lua_getfield(L, g, "tostring");
    lua_newtable(L);
    lua_newtable(L);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, sandbox_tostring, 3);
    lua_setfield(L, g, "tostring");
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
    lua_getfield(L, g, "string");
    wrap_field(L, -1, "rep", sandbox_rep);
    lua_getfield(L, -1, "format");
    lua_getfield(L, g, "tostring");
    lua_pushcclosure(L, sandbox_format, 2);
    lua_setfield(L, -2, "format");
    rh_open_patterns(L, -1); /* find, match, gmatch, gsub: counted (pattern.c) */
    lua_pop(L, 1);
    lua_getfield(L, g, "table");
    wrap_field(L, -1, "move", sandbox_move);
    wrap_field_flag(L, -1, "insert", sandbox_shift, 0);
    wrap_field_flag(L, -1, "remove", sandbox_shift, 1);
    wrap_field_flag(L, -1, "concat", sandbox_range, 1);
    wrap_field_flag(L, -1, "unpack", sandbox_range, 0);
    wrap_field(L, -1, "sort", sandbox_sort);
    lua_pop(L, 1);
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
