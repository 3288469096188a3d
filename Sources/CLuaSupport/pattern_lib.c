/* The sandbox's string.find, string.match, string.gmatch and string.gsub, on the counting
 * matcher of pattern.c: plain searches count their comparisons, every match its steps, and
 * both are charged to the call's budget before any Lua code (a gsub replacement) runs. */
#include "pattern.h"

#include <ctype.h>
#include <string.h>

/* A 1-based start position, negative from the end, clamped as string.find does. */
static size_t start_offset(lua_Integer pos, size_t len) {
    if (pos > 0) return (size_t)pos - 1;
    if (pos == 0 || pos < -(lua_Integer)len) return 0;
    return len - (size_t)(-pos);
}

static int has_specials(const char *p, size_t lp) {
    for (size_t i = 0; i < lp; i++)
        if (p[i] != 0 && strchr(PAT_SPECIALS, p[i])) return 1;
    return 0;
}

/* A plain search; every candidate position costs one step and a step per 16 bytes compared. */
static const char *plain_find(pat_state *m, const char *s, size_t ls, const char *p, size_t lp) {
    if (lp == 0) return s;
    if (lp > ls) return NULL;
    const char *last = s + (ls - lp);
    long long per_candidate = 1 + (long long)(lp >> 4);
    while (s <= last) {
        const char *at = memchr(s, p[0], (size_t)(last - s) + 1);
        if (!at) break;
        pat_steps(m, per_candidate + ((at - s) >> 6));
        if (memcmp(at + 1, p + 1, lp - 1) == 0) return at;
        s = at + 1;
    }
    return NULL;
}

static int find_or_match(lua_State *L, int find) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_offset(luaL_optinteger(L, 3, 1), ls);
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    pat_state m;
    rh_pat_begin(&m, L, s, ls, p, lp);
    if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
        const char *at = plain_find(&m, s + init, ls - init, p, lp);
        rh_pat_charge(&m);
        if (at) {
            lua_pushinteger(L, (lua_Integer)(at - s) + 1);
            lua_pushinteger(L, (lua_Integer)(at - s + (ptrdiff_t)lp));
            return 2;
        }
        luaL_pushfail(L);
        return 1;
    }
    int anchored = *p == '^';
    if (anchored) p++;
    const char *at = s + init;
    do {
        pat_restart(&m);
        const char *end = rh_pat_match(&m, at, p);
        if (end) {
            rh_pat_charge(&m);
            if (!find) return rh_pat_push_captures(&m, at, end);
            lua_pushinteger(L, (lua_Integer)(at - s) + 1);
            lua_pushinteger(L, (lua_Integer)(end - s));
            return rh_pat_push_captures(&m, NULL, NULL) + 2;
        }
    } while (at++ < m.src_end && !anchored);
    rh_pat_charge(&m);
    luaL_pushfail(L);
    return 1;
}

static int pattern_find(lua_State *L) { return find_or_match(L, 1); }
static int pattern_match(lua_State *L) { return find_or_match(L, 0); }

/* gmatch's iterator: upvalues are the subject, the pattern and a userdata holding where the
 * next search starts and where the last match ended (-1: none), as offsets. */
typedef struct gmatch_position {
    size_t next;
    ptrdiff_t last_end;
} gmatch_position;

static int gmatch_step(lua_State *L) {
    size_t ls, lp;
    const char *s = lua_tolstring(L, lua_upvalueindex(1), &ls);
    const char *p = lua_tolstring(L, lua_upvalueindex(2), &lp);
    gmatch_position *at = lua_touserdata(L, lua_upvalueindex(3));
    pat_state m;
    rh_pat_begin(&m, L, s, ls, p, lp);
    for (const char *from = s + at->next; from <= m.src_end; from++) {
        pat_restart(&m);
        const char *end = rh_pat_match(&m, from, p);
        if (end && end - s != at->last_end) { /* an empty match where the last one ended is skipped */
            at->next = (size_t)(end - s);
            at->last_end = end - s;
            rh_pat_charge(&m);
            return rh_pat_push_captures(&m, from, end);
        }
    }
    at->next = ls + 1;
    rh_pat_charge(&m);
    return 0;
}

static int pattern_gmatch(lua_State *L) {
    size_t ls;
    luaL_checklstring(L, 1, &ls);
    luaL_checkstring(L, 2);
    size_t init = start_offset(luaL_optinteger(L, 3, 1), ls);
    lua_settop(L, 2);
    gmatch_position *at = lua_newuserdatauv(L, sizeof *at, 0);
    at->next = init > ls ? ls + 1 : init;
    at->last_end = -1;
    lua_pushcclosure(L, gmatch_step, 3);
    return 1;
}

/* Appends the replacement string (argument 3) for a match from s to e: %0-%9 and %%. */
static void add_replacement_text(pat_state *m, luaL_Buffer *b, const char *s, const char *e) {
    lua_State *L = m->L;
    size_t l;
    const char *text = lua_tolstring(L, 3, &l);
    const char *end = text + l;
    const char *esc;
    while ((esc = memchr(text, PAT_ESC, (size_t)(end - text))) != NULL) {
        luaL_addlstring(b, text, (size_t)(esc - text));
        char c = esc[1]; /* the string ends with '\0', so this is never past it */
        if (c == PAT_ESC) {
            luaL_addchar(b, PAT_ESC);
        } else if (c == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else if (isdigit((unsigned char)c)) {
            rh_pat_push_capture(m, c - '1', s, e);
            luaL_addvalue(b); /* a position capture is a number: added as its text */
        } else {
            luaL_error(L, "invalid use of '%c' in replacement string", PAT_ESC);
        }
        text = esc + 2;
    }
    luaL_addlstring(b, text, (size_t)(end - text));
}

/* Appends what replaces a match from s to e; returns whether it changed the text. */
static int add_replacement(pat_state *m, luaL_Buffer *b, const char *s, const char *e, int kind) {
    lua_State *L = m->L;
    if (kind == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = rh_pat_push_captures(m, s, e);
        lua_call(L, n, 1);
    } else if (kind == LUA_TTABLE) {
        rh_pat_push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    } else {
        add_replacement_text(m, b, s, e);
        return 1;
    }
    if (!lua_toboolean(L, -1)) { /* nil or false: the match stays as it was */
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return 0;
    }
    if (!lua_isstring(L, -1)) return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return 1;
}

static int pattern_gsub(lua_State *L) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    int kind = lua_type(L, 3);
    lua_Integer most = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    luaL_argexpected(L, kind == LUA_TNUMBER || kind == LUA_TSTRING || kind == LUA_TFUNCTION || kind == LUA_TTABLE, 3,
                     "string/function/table");
    pat_state m;
    rh_pat_begin(&m, L, s, ls, p, lp);
    int anchored = *p == '^';
    if (anchored) p++;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    const char *at = s;
    const char *last_end = NULL;
    lua_Integer n = 0;
    int changed = 0;
    while (n < most) {
        pat_restart(&m);
        const char *end = rh_pat_match(&m, at, p);
        if (end && end != last_end) {
            n++;
            rh_pat_charge(&m); /* before any Lua code a replacement function runs */
            changed |= add_replacement(&m, &b, at, end, kind);
            at = last_end = end;
        } else if (at < m.src_end) {
            luaL_addchar(&b, *at++);
        } else {
            break;
        }
        if (anchored) break;
    }
    rh_pat_charge(&m);
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, at, (size_t)(m.src_end - at));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    return 2;
}

void rh_open_patterns(lua_State *L, int string_table) {
    static const luaL_Reg functions[] = {
        {"find", pattern_find}, {"match", pattern_match}, {"gmatch", pattern_gmatch}, {"gsub", pattern_gsub}, {NULL, NULL}};
    string_table = lua_absindex(L, string_table);
    for (const luaL_Reg *f = functions; f->name; f++) {
        lua_pushcfunction(L, f->func);
        lua_setfield(L, string_table, f->name);
    }
}
