/* The pattern matcher's state and entry points, shared by its two halves: pattern.c (the
 * matcher: classes, sets, captures, backtracking, each step counted) and pattern_lib.c (the
 * sandbox's string.find, match, gmatch and gsub built on it). Internal to CLuaSupport. */
#ifndef RH_PATTERN_H
#define RH_PATTERN_H

#include "host.h"

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

/* Charges the steps counted so far to the call's budget. */
void rh_pat_charge(pat_state *m);

static inline void pat_steps(pat_state *m, long long n) {
    m->steps += n;
    if (m->steps >= PAT_CHARGE_EVERY) rh_pat_charge(m);
}

/* A matcher over subject s (ls bytes) and pattern p (lp bytes). */
void rh_pat_begin(pat_state *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp);

/* A fresh attempt at one position: no captures, the full depth. */
static inline void pat_restart(pat_state *m) {
    m->level = 0;
    m->depth_left = PAT_MAX_DEPTH;
}

/* Matches pattern p (to its end) at subject position s: where the match ends, or NULL. */
const char *rh_pat_match(pat_state *m, const char *s, const char *p);
/* Pushes capture i of a match from s to e (the whole match when the pattern has none). */
void rh_pat_push_capture(pat_state *m, int i, const char *s, const char *e);
/* Pushes every capture (or the whole match when s is not NULL and there are none). */
int rh_pat_push_captures(pat_state *m, const char *s, const char *e);

#endif
