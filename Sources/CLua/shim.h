#ifndef CLUA_SHIM_H
#define CLUA_SHIM_H
/* Lua 5.4's C API as Swift can see it. Swift imports plain functions from these headers but not
 * function-like macros, computed constants or variadic functions: each of those the project uses
 * gets a static inline twin here, prefixed clua_. */
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

static const int CLUA_REGISTRYINDEX = LUA_REGISTRYINDEX;
static const int CLUA_MULTRET = LUA_MULTRET;
static const int CLUA_NOREF = LUA_NOREF;
static const int CLUA_REFNIL = LUA_REFNIL;

static inline int clua_upvalueindex(int i) { return lua_upvalueindex(i); }
static inline void clua_pop(lua_State *L, int n) { lua_pop(L, n); }
static inline void clua_newtable(lua_State *L) { lua_newtable(L); }
static inline int clua_isnil(lua_State *L, int i) { return lua_isnil(L, i); }
static inline int clua_isnoneornil(lua_State *L, int i) { return lua_isnoneornil(L, i); }
static inline int clua_istable(lua_State *L, int i) { return lua_istable(L, i); }
static inline int clua_isfunction(lua_State *L, int i) { return lua_isfunction(L, i); }
static inline void clua_remove(lua_State *L, int i) { lua_remove(L, i); }
static inline void clua_insert(lua_State *L, int i) { lua_insert(L, i); }
static inline void clua_replace(lua_State *L, int i) { lua_replace(L, i); }
static inline const char *clua_tolstring(lua_State *L, int i, size_t *len) { return lua_tolstring(L, i, len); }
static inline lua_Number clua_tonumberx(lua_State *L, int i, int *isnum) { return lua_tonumberx(L, i, isnum); }
static inline lua_Integer clua_tointegerx(lua_State *L, int i, int *isnum) { return lua_tointegerx(L, i, isnum); }
static inline void clua_pushcfunction(lua_State *L, lua_CFunction f) { lua_pushcfunction(L, f); }
static inline int clua_pcall(lua_State *L, int nargs, int nresults, int msgh) { return lua_pcall(L, nargs, nresults, msgh); }
static inline int clua_getglobal(lua_State *L, const char *name) { return lua_getglobal(L, name); }
static inline void clua_setglobal(lua_State *L, const char *name) { lua_setglobal(L, name); }
static inline int clua_getref(lua_State *L, int ref) { return lua_rawgeti(L, LUA_REGISTRYINDEX, ref); }
static inline const char *clua_typename_of(lua_State *L, int i) { return luaL_typename(L, i); }
static inline int clua_loadbufferx(lua_State *L, const char *buf, size_t sz, const char *name, const char *mode) {
    return luaL_loadbufferx(L, buf, sz, name, mode);
}
/* Reads t[k] without metamethods: a host never runs script code by reading a result. */
static inline int clua_rawgetfield(lua_State *L, int idx, const char *k) {
    idx = lua_absindex(L, idx);
    lua_pushstring(L, k);
    return lua_rawget(L, idx);
}
/* The same for a table at an absolute (positive) index. */
static inline int clua_rawgetfield_abs(lua_State *L, int absidx, const char *k) {
    lua_pushstring(L, k);
    return lua_rawget(L, absidx);
}
/* Sets t[k] = top without metamethods, popping the value. */
static inline void clua_rawsetfield(lua_State *L, int idx, const char *k) {
    idx = lua_absindex(L, idx);
    lua_pushstring(L, k);
    lua_insert(L, -2);
    lua_rawset(L, idx);
}
#endif
