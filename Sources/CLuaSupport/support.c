/* Lua host support: allocator, budget hook, watchdog, call funnel, trampoline and sandbox.
 * This is the only file of the project in which a longjmp can start. */
#define _GNU_SOURCE
#include "CLuaSupport.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lualib.h>

/* Coroutines nest at most this deep inside one call (Lua's C stack limit is 200). */
#define RH_CHAIN_MAX 256
/* Blocks up to this size are pooled by 16-byte size class (Lua's tables, strings, closures are
 * mostly this small); larger ones go to malloc. */
#define RH_SMALL_MAX 512
#define RH_SMALL_CLASSES (RH_SMALL_MAX / 16)
#define RH_SLAB_SIZE (64 * 1024)
/* The main stack slot that holds the message handler. */
#define RH_HANDLER_SLOT 1
/* Room an allocation may still take once the cap was hit, so the error can be built. */
#define RH_HEADROOM (1u << 20)
/* Instructions between two count-hook calls while the budget is counted. */
#define RH_STEP 1000

struct rh_host {
    lua_State *L;
    rh_dispatch_fn dispatch;

    /* memory: small blocks come from per-size free lists carved out of slabs */
    void *free_blocks[RH_SMALL_CLASSES + 1];
    char *slab_cursor;
    size_t slab_left;
    void **slabs; /* each slab's first word links to the previous slab */
    size_t used;
    size_t limit;
    int protected_zone; /* the cap refuses growth only inside a protected call */

    /* budget */
    long long budget;
    int exact;
    unsigned grace_ms;
    long long remaining;
    volatile sig_atomic_t armed;
    rh_stop stop;
    char where[256];
    int nesting;

    /* threads running inside the current call: the main thread, then resumed coroutines */
    lua_State *chain[RH_CHAIN_MAX];
    volatile sig_atomic_t depth;

    /* watchdog */
    pthread_t watchdog;
    int has_watchdog;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int quit;
    atomic_ulong seq;
    atomic_int in_call;
    pthread_t caller;
};

static rh_host *host_of(lua_State *L) { return *(rh_host **)lua_getextraspace(L); }

/* ---- memory ------------------------------------------------------------------------------ */

static void arm(rh_host *h, int count);

/* Called only when growth would pass the cap: refuses inside a protected call (the first refusal
 * arms the sticky stop), allows it outside, where Swift code must never see an error raised. */
static __attribute__((noinline)) int refuse_growth(rh_host *h, size_t after) {
    if (!h->protected_zone) return 0;
    size_t cap = h->limit + (h->stop == RH_STOP_MEMORY ? RH_HEADROOM : 0);
    if (after <= cap) return 0;
    if (h->stop == RH_STOP_NONE) {
        h->stop = RH_STOP_MEMORY;
        arm(h, 1); /* sticky: the next instruction raises again, past any pcall */
    }
    return 1;
}

static inline size_t size_class(size_t n) { return (n + 15) >> 4; }

static void *small_take(rh_host *h, size_t cls) {
    void *block = h->free_blocks[cls];
    if (block) {
        h->free_blocks[cls] = *(void **)block;
        return block;
    }
    size_t bytes = cls << 4;
    if (h->slab_left < bytes) {
        void **slab = malloc(RH_SLAB_SIZE);
        if (!slab) return NULL;
        *slab = h->slabs;
        h->slabs = slab;
        h->slab_cursor = (char *)slab + 16;
        h->slab_left = RH_SLAB_SIZE - 16;
    }
    block = h->slab_cursor;
    h->slab_cursor += bytes;
    h->slab_left -= bytes;
    return block;
}

static inline void small_give(rh_host *h, void *block, size_t cls) {
    *(void **)block = h->free_blocks[cls];
    h->free_blocks[cls] = block;
}

static void free_slabs(rh_host *h) {
    void **slab = h->slabs;
    while (slab) {
        void **previous = *slab;
        free(slab);
        slab = previous;
    }
}

/* Lua's allocator contract: osize is the block's size whenever ptr is not NULL, so a block's
 * size class is known without a header. */
static void *rh_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    rh_host *h = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        h->used -= old;
        if (old <= RH_SMALL_MAX) {
            if (ptr) small_give(h, ptr, size_class(old));
        } else {
            free(ptr);
        }
        return NULL;
    }
    size_t after = h->used - old + nsize;
    if (__builtin_expect(after > h->limit, 0) && h->limit && nsize > old && refuse_growth(h, after)) return NULL;
    void *p;
    if (nsize <= RH_SMALL_MAX) {
        if (ptr && old <= RH_SMALL_MAX && size_class(old) == size_class(nsize)) {
            p = ptr;
        } else {
            p = small_take(h, size_class(nsize));
            if (p && ptr) {
                memcpy(p, ptr, old < nsize ? old : nsize);
                if (old <= RH_SMALL_MAX) small_give(h, ptr, size_class(old)); else free(ptr);
            }
        }
    } else if (ptr && old <= RH_SMALL_MAX) {
        p = malloc(nsize);
        if (p) {
            memcpy(p, ptr, old);
            small_give(h, ptr, size_class(old));
        }
    } else {
        p = realloc(ptr, nsize);
    }
    if (__builtin_expect(p != NULL, 1)) h->used = after;
    return p;
}

static int rh_panic(lua_State *L) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "rehearse: unprotected Lua error: %s\n", msg ? msg : "(not a string)");
    abort();
}

/* ---- budget ------------------------------------------------------------------------------ */

static void budget_hook(lua_State *L, lua_Debug *ar) {
    rh_host *h = host_of(L);
    if (h->stop == RH_STOP_NONE) {
        h->remaining -= RH_STEP;
        if (h->remaining > 0) return;
        h->stop = RH_STOP_BUDGET;
        if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0)
            snprintf(h->where, sizeof h->where, "%s:%d", ar->short_src, ar->currentline);
        arm(h, 1);
    } else if (h->where[0] == 0 && lua_getinfo(L, "Sl", ar) && ar->currentline > 0) {
        snprintf(h->where, sizeof h->where, "%s:%d", ar->short_src, ar->currentline);
    }
    if (h->stop == RH_STOP_MEMORY) luaL_error(L, "memory limit exceeded");
    luaL_error(L, "instruction budget exceeded");
}

/* Sets the count hook on every thread of the current call. Safe from a signal handler: Lua
 * allows lua_sethook asynchronously, and the chain is only appended to after its slot is set. */
static void arm(rh_host *h, int count) {
    h->armed = 1;
    int n = h->depth;
    for (int i = 0; i < n; i++) lua_sethook(h->chain[i], budget_hook, LUA_MASKCOUNT, count);
}

static void disarm(lua_State *L) { lua_sethook(L, NULL, 0, 0); }

/* The thread whose call the watchdog may interrupt; set at each top-level call. */
static __thread rh_host *active_host;

static void on_watchdog_signal(int sig) {
    (void)sig;
    rh_host *h = active_host;
    if (h && atomic_load(&h->in_call) && !h->armed && h->stop == RH_STOP_NONE) arm(h, RH_STEP);
}

static int watchdog_signal(void) { return SIGRTMIN + 3; }

static pthread_once_t signal_once = PTHREAD_ONCE_INIT;
static void install_signal(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_watchdog_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(watchdog_signal(), &sa, NULL);
}

/* Wakes every grace period; a call still running under the same sequence number as at the last
 * wake has overrun, and its thread is signalled to arm the count hook. */
static void *watchdog_main(void *arg) {
    rh_host *h = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&h->mutex);
    while (!h->quit) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = ts.tv_nsec + (long)h->grace_ms * 1000000L;
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&h->cond, &h->mutex, &ts);
        if (h->quit) break;
        unsigned long now = atomic_load(&h->seq);
        if (atomic_load(&h->in_call) && now == seen && !h->armed) pthread_kill(h->caller, watchdog_signal());
        seen = now;
    }
    pthread_mutex_unlock(&h->mutex);
    return NULL;
}

static void start_watchdog(rh_host *h) {
    if (h->has_watchdog || h->exact || h->budget <= 0) return;
    pthread_once(&signal_once, install_signal);
    /* The watchdog must not take the signal meant for the Lua thread. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, watchdog_signal());
    pthread_sigmask(SIG_BLOCK, &block, &old);
    h->has_watchdog = pthread_create(&h->watchdog, NULL, watchdog_main, h) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void stop_watchdog(rh_host *h) {
    if (!h->has_watchdog) return;
    pthread_mutex_lock(&h->mutex);
    h->quit = 1;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->mutex);
    pthread_join(h->watchdog, NULL);
    h->has_watchdog = 0;
    h->quit = 0;
}

static int message_handler(lua_State *L);

/* ---- host -------------------------------------------------------------------------------- */

rh_host *rh_host_new(size_t memory_limit, rh_dispatch_fn dispatch) {
    rh_host *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->limit = memory_limit;
    h->dispatch = dispatch;
    h->grace_ms = 10;
    pthread_mutex_init(&h->mutex, NULL);
    pthread_cond_init(&h->cond, NULL);
    h->L = lua_newstate(rh_alloc, h);
    if (!h->L) {
        free_slabs(h);
        free(h);
        return NULL;
    }
    *(rh_host **)lua_getextraspace(h->L) = h;
    lua_atpanic(h->L, rh_panic);
    /* The message handler lives at the bottom of the main stack for the state's whole life, so
     * a call pays no push and rotate for it. */
    lua_pushcfunction(h->L, message_handler);
    return h;
}

void rh_host_free(rh_host *h) {
    if (!h) return;
    stop_watchdog(h);
    if (active_host == h) active_host = NULL;
    lua_close(h->L);
    free_slabs(h);
    pthread_mutex_destroy(&h->mutex);
    pthread_cond_destroy(&h->cond);
    free(h);
}

lua_State *rh_host_state(rh_host *h) { return h->L; }

void rh_host_set_budget(rh_host *h, long long instructions, int exact, unsigned grace_ms) {
    stop_watchdog(h);
    h->budget = instructions > 0 ? instructions : 0;
    h->exact = exact;
    h->grace_ms = grace_ms ? grace_ms : 1;
    start_watchdog(h);
}

void rh_host_set_memory_limit(rh_host *h, size_t bytes) { h->limit = bytes; }
size_t rh_host_memory_used(rh_host *h) { return h->used; }
rh_stop rh_last_stop(rh_host *h) { return h->stop; }
const char *rh_last_where(rh_host *h) { return h->where; }

/* ---- calls ------------------------------------------------------------------------------- */

/* Message handler: any error value becomes "message\nstack traceback:...". */
static int message_handler(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
        else
            msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int rh_pcall(lua_State *L, int nargs, int nresults) {
    rh_host *h = host_of(L);
    if (h->nesting++ > 0) { /* a call from inside a call: same budget, same chain */
        int status = lua_pcall(L, nargs, nresults, RH_HANDLER_SLOT);
        h->nesting--;
        return status;
    }
    h->chain[0] = L;
    h->depth = 1;
    h->stop = RH_STOP_NONE;
    h->where[0] = 0;
    h->remaining = h->budget;
    h->armed = 0;
    if (h->budget > 0) {
        active_host = h;
        if (h->exact) {
            arm(h, RH_STEP);
        } else {
            h->caller = pthread_self();
            atomic_fetch_add_explicit(&h->seq, 1, memory_order_relaxed);
            atomic_store_explicit(&h->in_call, 1, memory_order_relaxed);
        }
    }
    h->protected_zone = 1;
    int status = lua_pcall(L, nargs, nresults, RH_HANDLER_SLOT);
    h->protected_zone = 0;
    atomic_store_explicit(&h->in_call, 0, memory_order_relaxed);
    if (h->armed) {
        disarm(L);
        h->armed = 0;
    }
    h->depth = 0;
    h->nesting--;
    if (status == LUA_OK) h->stop = RH_STOP_NONE;
    if (h->stop == RH_STOP_MEMORY) lua_gc(L, LUA_GCCOLLECT); /* give the next call its room back */
    return status;
}

/* ---- Swift functions --------------------------------------------------------------------- */

static int trampoline(lua_State *L) {
    rh_host *h = host_of(L);
    void *closure = lua_touserdata(L, lua_upvalueindex(1));
    int zone = h->protected_zone;
    h->protected_zone = 0; /* Swift code must never see an allocation error raised */
    int n = h->dispatch(L, closure);
    h->protected_zone = zone;
    if (n == RH_SWIFT_ERROR) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
        return lua_error(L);
    }
    if (zone && h->limit && h->used > h->limit && h->stop == RH_STOP_NONE) {
        h->stop = RH_STOP_MEMORY;
        arm(h, 1);
        return luaL_error(L, "memory limit exceeded");
    }
    return n;
}

void rh_push_swift_function(lua_State *L, void *closure) {
    lua_pushlightuserdata(L, closure);
    lua_pushcclosure(L, trampoline, 1);
}

/* ---- sandbox ----------------------------------------------------------------------------- */

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
            lua_sethook(co, budget_hook, LUA_MASKCOUNT, h->stop == RH_STOP_NONE ? RH_STEP : 1);
        else
            disarm(co);
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
