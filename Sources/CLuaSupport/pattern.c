/* The sandbox's string.find, string.match, string.gmatch and string.gsub: Lua 5.4's pattern
 * language, matched by a backtracking matcher of our own that counts its steps and charges them
 * to the call's budget (rh_charge). Lua's own matcher runs inside one C call where no hook can
 * reach it, so a backtracking pattern (string.rep("a*", 20) .. "b") ran for hours; counted, it
 * stops with the budget, at the same line on every run. Plain searches count their comparisons
 * the same way. Semantics and error messages follow the reference manual, §6.4.1. */
#include "host.h"

#include <ctype.h>
#include <string.h>

#define PAT_ESC '%'
#define PAT_SPECIALS "^$*+?.([%-"
#define PAT_MAX_CAPTURES 32  /* as Lua's LUA_MAXCAPTURES */
#define PAT_MAX_DEPTH 200    /* as Lua's MAXCCALLS: nesting of the matcher's recursion */
#define CAP_OPEN (-1)        /* a capture not closed yet */
#define CAP_POSITION (-2)    /* a position capture, "()" */
/* Steps counted before they are charged: often enough that a runaway match stops within a
 * fraction of a millisecond of its budget, seldom enough that charging costs nothing. */
#define PAT_CHARGE_EVERY 4096

typedef struct pat_state {
    lua_State *L;
    const char *src;      /* the subject */
    const char *src_end;
    const char *pat_end;
    int depth_left;
    int level;            /* captures opened so far */
    long long steps;      /* counted, not yet charged */
    struct { const char *at; ptrdiff_t len; } cap[PAT_MAX_CAPTURES];
} pat_state;

static void pat_charge(pat_state *m) {
    long long n = m->steps;
    m->steps = 0;
    if (n > 0) rh_charge(m->L, (lua_Integer)n);
}

static inline void pat_steps(pat_state *m, long long n) {
    m->steps += n;
    if (m->steps >= PAT_CHARGE_EVERY) pat_charge(m);
}

static void pat_begin(pat_state *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
    m->L = L;
    m->src = s;
    m->src_end = s + ls;
    m->pat_end = p + lp;
    m->steps = 0;
    m->level = 0;
    m->depth_left = PAT_MAX_DEPTH;
}

/* A fresh attempt at one position: no captures, the full depth. */
static inline void pat_restart(pat_state *m) {
    m->level = 0;
    m->depth_left = PAT_MAX_DEPTH;
}

static const char *do_match(pat_state *m, const char *s, const char *p);

/* Where the single-character class starting at p ends. */
static const char *class_end(pat_state *m, const char *p) {
    char c = *p++;
    if (c == PAT_ESC) {
        if (p == m->pat_end) luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    }
    if (c == '[') {
        if (*p == '^') p++;
        do { /* the first character of a set is never its end: "[]]" holds ']' */
            if (p == m->pat_end) luaL_error(m->L, "malformed pattern (missing ']')");
            char d = *p++;
            if (d == PAT_ESC && p < m->pat_end) p++;
        } while (*p != ']');
        return p + 1;
    }
    return p;
}

/* Whether character c is in class %cl (an upper-case letter is the complement). */
static int in_class(int c, int cl) {
    int yes;
    switch (tolower(cl)) {
    case 'a': yes = isalpha(c); break;
    case 'c': yes = iscntrl(c); break;
    case 'd': yes = isdigit(c); break;
    case 'g': yes = isgraph(c); break;
    case 'l': yes = islower(c); break;
    case 'p': yes = ispunct(c); break;
    case 's': yes = isspace(c); break;
    case 'u': yes = isupper(c); break;
    case 'w': yes = isalnum(c); break;
    case 'x': yes = isxdigit(c); break;
    default: return cl == c; /* %. %% %[ ...: the character itself */
    }
    yes = yes != 0;
    return isupper(cl) ? !yes : yes;
}

/* Whether c is in the set [..] from `set` (its '[') to `last` (its ']'). */
static int in_set(int c, const char *set, const char *last) {
    int wanted = 1;
    const char *p = set + 1;
    if (*p == '^') {
        wanted = 0;
        p++;
    }
    for (; p < last; p++) {
        if (*p == PAT_ESC) {
            p++;
            if (in_class(c, (unsigned char)*p)) return wanted;
        } else if (p[1] == '-' && p + 2 < last) {
            if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2]) return wanted;
            p += 2;
        } else if ((unsigned char)*p == c) {
            return wanted;
        }
    }
    return !wanted;
}

/* Whether the subject character at s matches the single-character class p..ep. */
static int single(pat_state *m, const char *s, const char *p, const char *ep) {
    if (s >= m->src_end) return 0;
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return 1;
    case PAT_ESC: return in_class(c, (unsigned char)p[1]);
    case '[': return in_set(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

static const char *greedy(pat_state *m, const char *s, const char *p, const char *ep) {
    ptrdiff_t n = 0;
    while (single(m, s + n, p, ep)) n++;
    pat_steps(m, n);
    for (; n >= 0; n--) { /* the longest run first, one shorter at each failure */
        const char *end = do_match(m, s + n, ep + 1);
        if (end) return end;
    }
    return NULL;
}

static const char *lazy(pat_state *m, const char *s, const char *p, const char *ep) {
    for (;;) {
        const char *end = do_match(m, s, ep + 1);
        if (end) return end;
        if (!single(m, s, p, ep)) return NULL;
        s++;
    }
}

static const char *open_capture(pat_state *m, const char *s, const char *p, ptrdiff_t what) {
    if (m->level >= PAT_MAX_CAPTURES) luaL_error(m->L, "too many captures");
    m->cap[m->level].at = s;
    m->cap[m->level].len = what;
    m->level++;
    const char *end = do_match(m, s, p);
    if (!end) m->level--;
    return end;
}

static const char *close_capture(pat_state *m, const char *s, const char *p) {
    int open = m->level - 1;
    while (open >= 0 && m->cap[open].len != CAP_OPEN) open--;
    if (open < 0) luaL_error(m->L, "invalid pattern capture");
    m->cap[open].len = s - m->cap[open].at;
    const char *end = do_match(m, s, p);
    if (!end) m->cap[open].len = CAP_OPEN;
    return end;
}

/* %bxy: a balanced run from x to the matching y. */
static const char *balanced(pat_state *m, const char *s, const char *p) {
    if (p >= m->pat_end - 1) luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    if (s >= m->src_end || *s != *p) return NULL;
    char open = p[0], close = p[1];
    int depth = 1;
    const char *start = s;
    while (++s < m->src_end) {
        if (*s == close) {
            if (--depth == 0) {
                pat_steps(m, s - start);
                return s + 1;
            }
        } else if (*s == open) {
            depth++;
        }
    }
    pat_steps(m, s - start);
    return NULL;
}

/* %1-%9: the text of an earlier, closed capture again. */
static const char *back_reference(pat_state *m, const char *s, int digit) {
    int n = digit - '1';
    if (n < 0 || n >= m->level || m->cap[n].len == CAP_OPEN) luaL_error(m->L, "invalid capture index %%%d", n + 1);
    if (m->cap[n].len == CAP_POSITION) return NULL; /* a position is no text: it matches nothing, as in Lua */
    size_t len = (size_t)m->cap[n].len;
    pat_steps(m, (long long)(len >> 4));
    if ((size_t)(m->src_end - s) >= len && memcmp(m->cap[n].at, s, len) == 0) return s + len;
    return NULL;
}

/* Matches pattern p (to its end) at subject position s: where the match ends, or NULL. */
static const char *do_match(pat_state *m, const char *s, const char *p) {
    if (m->depth_left-- == 0) luaL_error(m->L, "pattern too complex");
    pat_steps(m, 1);
    while (p != m->pat_end) {
        switch (*p) {
        case '(':
            s = p[1] == ')' ? open_capture(m, s, p + 2, CAP_POSITION) : open_capture(m, s, p + 1, CAP_OPEN);
            goto done;
        case ')':
            s = close_capture(m, s, p + 1);
            goto done;
        case '$':
            if (p + 1 == m->pat_end) {
                if (s != m->src_end) s = NULL;
                goto done;
            }
            break; /* a '$' elsewhere is itself */
        case PAT_ESC:
            if (p[1] == 'b') {
                s = balanced(m, s, p + 2);
                if (!s) goto done;
                p += 4;
                continue;
            }
            if (p[1] == 'f') {
                p += 2;
                if (*p != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
                const char *ep = class_end(m, p);
                int before = s == m->src ? 0 : (unsigned char)s[-1];
                int here = s < m->src_end ? (unsigned char)*s : 0;
                if (in_set(before, p, ep - 1) || !in_set(here, p, ep - 1)) {
                    s = NULL;
                    goto done;
                }
                p = ep;
                continue;
            }
            if (isdigit((unsigned char)p[1])) {
                s = back_reference(m, s, (unsigned char)p[1]);
                if (!s) goto done;
                p += 2;
                continue;
            }
            break;
        default:
            break;
        }
        const char *ep = class_end(m, p);
        if (!single(m, s, p, ep)) {
            if (*ep == '*' || *ep == '?' || *ep == '-') { /* zero repetitions are fine */
                p = ep + 1;
                continue;
            }
            s = NULL;
            goto done;
        }
        switch (*ep) {
        case '?': {
            const char *end = do_match(m, s + 1, ep + 1);
            if (end) {
                s = end;
                goto done;
            }
            p = ep + 1;
            continue;
        }
        case '+': s = greedy(m, s + 1, p, ep); goto done;
        case '*': s = greedy(m, s, p, ep); goto done;
        case '-': s = lazy(m, s, p, ep); goto done;
        default:
            s++;
            p = ep;
            continue;
        }
    }
done:
    m->depth_left++;
    return s;
}

/* Pushes capture i of a match from s to e (the whole match when the pattern has none). */
static void push_capture(pat_state *m, int i, const char *s, const char *e) {
    if (i >= m->level) {
        if (i != 0) luaL_error(m->L, "invalid capture index %%%d", i + 1);
        lua_pushlstring(m->L, s, (size_t)(e - s));
        return;
    }
    ptrdiff_t len = m->cap[i].len;
    if (len == CAP_OPEN) luaL_error(m->L, "unfinished capture");
    if (len == CAP_POSITION) lua_pushinteger(m->L, (lua_Integer)(m->cap[i].at - m->src) + 1);
    else lua_pushlstring(m->L, m->cap[i].at, (size_t)len);
}

/* Pushes every capture (or the whole match when s is not NULL and there are none). */
static int push_captures(pat_state *m, const char *s, const char *e) {
    int n = m->level == 0 && s ? 1 : m->level;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++) push_capture(m, i, s, e);
    return n;
}

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
    pat_begin(&m, L, s, ls, p, lp);
    if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
        const char *at = plain_find(&m, s + init, ls - init, p, lp);
        pat_charge(&m);
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
        const char *end = do_match(&m, at, p);
        if (end) {
            pat_charge(&m);
            if (!find) return push_captures(&m, at, end);
            lua_pushinteger(L, (lua_Integer)(at - s) + 1);
            lua_pushinteger(L, (lua_Integer)(end - s));
            return push_captures(&m, NULL, NULL) + 2;
        }
    } while (at++ < m.src_end && !anchored);
    pat_charge(&m);
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
    pat_begin(&m, L, s, ls, p, lp);
    for (const char *from = s + at->next; from <= m.src_end; from++) {
        pat_restart(&m);
        const char *end = do_match(&m, from, p);
        if (end && end - s != at->last_end) { /* an empty match where the last one ended is skipped */
            at->next = (size_t)(end - s);
            at->last_end = end - s;
            pat_charge(&m);
            return push_captures(&m, from, end);
        }
    }
    at->next = ls + 1;
    pat_charge(&m);
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
            push_capture(m, c - '1', s, e);
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
        int n = push_captures(m, s, e);
        lua_call(L, n, 1);
    } else if (kind == LUA_TTABLE) {
        push_capture(m, 0, s, e);
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
    pat_begin(&m, L, s, ls, p, lp);
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
        const char *end = do_match(&m, at, p);
        if (end && end != last_end) {
            n++;
            pat_charge(&m); /* before any Lua code a replacement function runs */
            changed |= add_replacement(&m, &b, at, end, kind);
            at = last_end = end;
        } else if (at < m.src_end) {
            luaL_addchar(&b, *at++);
        } else {
            break;
        }
        if (anchored) break;
    }
    pat_charge(&m);
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
