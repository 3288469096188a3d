/* The matcher behind the sandbox's string.find, match, gmatch and gsub (pattern_lib.c): Lua
 * 5.4's pattern language, matched by a backtracking matcher of our own that counts its steps and
 * charges them to the call's budget (rh_charge). Lua's own matcher runs inside one C call where
 * no hook can reach it, so a backtracking pattern (string.rep("a*", 20) .. "b") ran for hours;
 * counted, it stops with the budget, at the same line on every run. Semantics and error messages
 * follow the reference manual, §6.4.1. */
#include "pattern.h"

#include <ctype.h>
#include <string.h>

void rh_pat_charge(pat_state *m) {
    long long n = m->steps;
    m->steps = 0;
    if (n > 0) rh_charge(m->L, (lua_Integer)n);
}

void rh_pat_begin(pat_state *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
    m->L = L;
    m->src = s;
    m->src_end = s + ls;
    m->pat_end = p + lp;
    m->steps = 0;
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

void rh_pat_push_capture(pat_state *m, int i, const char *s, const char *e) {
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

int rh_pat_push_captures(pat_state *m, const char *s, const char *e) {
    int n = m->level == 0 && s ? 1 : m->level;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++) rh_pat_push_capture(m, i, s, e);
    return n;
}

const char *rh_pat_match(pat_state *m, const char *s, const char *p) { return do_match(m, s, p); }
