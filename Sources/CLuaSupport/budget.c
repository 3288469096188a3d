/* The instruction budget: count hook, work charged by C functions, straight calls, and the call
 * funnel (top-level and nested calls). The watchdog and the CPU-time backstops are watchdog.c's. */
#include "host.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>


static void note_where(lua_State *L, lua_Debug *ar, char *buffer, size_t size) {
    if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0)
        snprintf(buffer, size, "%s:%d", ar->short_src, ar->currentline);
}

/* Records the line of the Lua function `level` frames up as the last line reached. */
void rh_note_reached(lua_State *L, int level) {
    rh_host *h = host_of(L);
    lua_Debug ar;
    for (; level < 8 && lua_getstack(L, level, &ar); level++) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            snprintf(h->reached, sizeof h->reached, "%s:%d", ar.short_src, ar.currentline);
            return;
        }
    }
}

static const char *stop_message(rh_stop stop) {
    switch (stop) {
    case RH_STOP_MEMORY: return "memory limit exceeded";
    case RH_STOP_HOST: return "call ended by the host";
    case RH_STOP_RUN_BUDGET: return "run instruction budget exceeded";
    case RH_STOP_CPU: return "CPU-time backstop of the call passed";
    case RH_STOP_RUN_CPU: return "CPU-time backstop of the run passed";
    default: return "instruction budget exceeded";
    }
}

/* Adds `n` counted instructions to the run's total; true when the run's budget is spent. */
static inline int charge_run(rh_host *h, long long n) {
    h->run_used = n > LLONG_MAX - h->run_used ? LLONG_MAX : h->run_used + n;
    return h->exact && h->run_budget > 0 && h->run_used >= h->run_budget;
}

int rh_host_charge_run(rh_host *h, long long units) { return units > 0 && charge_run(h, units); }

void rh_budget_hook(lua_State *L, lua_Debug *ar) {
    rh_host *h = host_of(L);
    if (h->stop == RH_STOP_NONE) {
        int count = lua_gethookcount(L);
        h->remaining -= count;
        int run_spent = charge_run(h, count);
        note_where(L, ar, h->reached, sizeof h->reached);
        rh_stop cpu = rh_cpu_stop(h);
        if (h->remaining > 0 && !run_spent && cpu == RH_STOP_NONE) return;
        /* A backstop names itself; the call's own budget names the stop when both budgets are
         * spent at once. */
        h->stop = cpu != RH_STOP_NONE ? cpu : run_spent && h->remaining > 0 ? RH_STOP_RUN_BUDGET : RH_STOP_BUDGET;
        memcpy(h->where, h->reached, sizeof h->where);
        rh_arm(h, 1);
    } else if (h->where[0] == 0) {
        note_where(L, ar, h->where, sizeof h->where);
    }
    luaL_error(L, "%s", stop_message(h->stop));
}

/* Sets the count hook on every thread of the current call. Safe from a signal handler: Lua
 * allows lua_sethook asynchronously, and the chain is only appended to after its slot is set. */
void rh_arm(rh_host *h, int count) {
    h->armed = 1;
    int n = h->depth;
    for (int i = 0; i < n; i++) {
        int c = count == 1 ? 1 : h->chain[i] == h->chain[0] ? h->mark : rh_coroutine_mark(h);
        lua_sethook(h->chain[i], rh_budget_hook, LUA_MASKCOUNT, c);
    }
}

void rh_disarm(lua_State *L) { lua_sethook(L, NULL, 0, 0); }

static void spend(rh_host *h, lua_State *L, rh_stop why) {
    h->stop = why;
    rh_note_reached(L, 1);
    memcpy(h->where, h->reached, sizeof h->where);
    rh_arm(h, 1);
}

int rh_charge_quietly(lua_State *L, long long units) {
    rh_host *h = host_of(L);
    if (h->nesting == 0 || h->stop != RH_STOP_NONE) return h->nesting != 0 && h->stop != RH_STOP_NONE;
    if (h->budget <= 0 || units <= 0) return 0;
    int call_spent = units >= h->remaining;
    int run_spent = charge_run(h, units);
    if (!call_spent && !run_spent) {
        h->remaining -= units;
        return 0;
    }
    h->remaining = call_spent ? 0 : h->remaining - units;
    spend(h, L, call_spent ? RH_STOP_BUDGET : RH_STOP_RUN_BUDGET);
    return 1;
}

void rh_charge(lua_State *L, lua_Integer units) {
    rh_host *h = host_of(L);
    if (h->nesting == 0) return;
    if (h->stop == RH_STOP_NONE) {
        rh_stop cpu = rh_cpu_stop(h);
        if (cpu != RH_STOP_NONE) {
            spend(h, L, cpu);
            luaL_error(L, "%s", stop_message(h->stop));
        }
    }
    if (h->budget <= 0 || units <= 0) return;
    if (h->stop != RH_STOP_NONE) luaL_error(L, "%s", stop_message(h->stop));
    int call_spent = units >= h->remaining;
    int run_spent = charge_run(h, units);
    if (call_spent || run_spent) {
        h->remaining = call_spent ? 0 : h->remaining - units;
        spend(h, L, call_spent ? RH_STOP_BUDGET : RH_STOP_RUN_BUDGET);
        luaL_error(L, "%s", stop_message(h->stop));
    }
    h->remaining -= units;
}

void rh_abort_call(rh_host *h) {
    if (h->nesting == 0) return;
    if (h->stop == RH_STOP_NONE) h->stop = RH_STOP_HOST;
    rh_arm(h, 1);
}


/* Message handler: any error value becomes "message\nstack traceback:...". The message is
 * joined as a Lua string, not passed to luaL_traceback as a C string, so a message holding a
 * NUL byte keeps what follows it. */
int rh_message_handler(lua_State *L) {
    rh_host *h = host_of(L);
    const char *msg = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : NULL;
    /* The very string a host function's failure raised: nothing in the script replaced it. */
    h->raised_unchanged = msg != NULL && msg == h->raised;
    int at = 1;
    if (msg == NULL) msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (!(luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING))
            lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
        at = lua_gettop(L);
    }
    lua_pushvalue(L, at);
    lua_pushliteral(L, "\n");
    luaL_traceback(L, L, NULL, 1);
    lua_concat(L, 3);
    return 1;
}

/* What a nested call saves of the call it interrupts. */
typedef struct rh_frame {
    long long remaining;
    int armed;
    rh_stop stop;
    int depth;
    int zone;
    int ref;
    char where[256];
} rh_frame;

/* A call from inside a call (a host function calling back into Lua): its own budget, the cap
 * armed, the host's message handler pushed below the function (stack slot 1 belongs to whatever
 * C function is running), and the interrupted call's state restored afterwards. */
static int nested_pcall(rh_host *h, lua_State *L, int nargs, int nresults, int ref) {
    int handler = lua_gettop(L) - nargs;
    lua_pushcfunction(L, rh_message_handler);
    lua_insert(L, handler);
    rh_frame saved = {h->remaining, h->armed, h->stop, h->depth, h->protected_zone, h->current_ref, {0}};
    memcpy(saved.where, h->where, sizeof saved.where);

    h->nesting++;
    h->remaining = h->budget;
    h->stop = RH_STOP_NONE;
    h->where[0] = 0;
    h->current_ref = ref;
    if (h->depth < RH_CHAIN_MAX) h->chain[h->depth++] = L;
    if (h->budget > 0 && (h->exact || h->armed)) rh_arm(h, RH_STEP);
    atomic_fetch_add_explicit(&h->seq, 1, memory_order_relaxed);
    h->protected_zone = 1;
    int status = lua_pcall(L, nargs, nresults, handler);
    h->protected_zone = saved.zone;
    lua_remove(L, handler);
    rh_stop nested_stop = h->stop;
    h->last_stop = status == LUA_OK ? RH_STOP_NONE : nested_stop;
    if (status != LUA_OK) memcpy(h->last_where, h->where, sizeof h->last_where);

    h->nesting--;
    h->depth = saved.depth;
    h->remaining = saved.remaining;
    h->stop = saved.stop;
    h->current_ref = saved.ref;
    memcpy(h->where, saved.where, sizeof h->where);
    atomic_fetch_add_explicit(&h->seq, 1, memory_order_relaxed);
    /* Re-arming restarts the interrupted thread's hook count, so the instructions it ran since
     * its last step are not seen: charge it one whole step instead. Deterministic, never less
     * than what ran, and a loop of nested calls cannot run uncounted. */
    if (h->budget > 0 && (h->exact || h->armed) && h->stop == RH_STOP_NONE) {
        h->remaining -= RH_STEP;
        int run_spent = h->exact && charge_run(h, RH_STEP);
        if (h->remaining <= 0 || run_spent) {
            h->stop = run_spent && h->remaining > 0 ? RH_STOP_RUN_BUDGET : RH_STOP_BUDGET;
            memcpy(h->where, h->reached, sizeof h->where);
        }
    }
    /* The nested call may have armed the hook (it overran) or left it sticky (count 1): the
     * interrupted call goes on counted at its own pace, or stops at its next instruction. */
    if (h->armed || saved.armed) rh_arm(h, h->stop == RH_STOP_NONE ? RH_STEP : 1);
    if (nested_stop == RH_STOP_MEMORY) lua_gc(L, LUA_GCCOLLECT);
    return status;
}

/* The calls of a state now run on thread `self`: the watchdog reads its CPU clock. */
static void note_thread(rh_host *h, pthread_t self) {
    h->caller = self;
    clockid_t clock;
    int known = pthread_getcpuclockid(self, &clock) == 0;
    if (known) atomic_store(&h->cpu_clock, (int)clock);
    atomic_store(&h->has_cpu_clock, known);
}

int rh_pcall(lua_State *L, int nargs, int nresults, int ref) {
    rh_host *h = host_of(L);
    if (h->nesting > 0) return nested_pcall(h, L, nargs, nresults, ref);
    h->nesting = 1;
    h->chain[0] = L;
    h->depth = 1;
    h->stop = RH_STOP_NONE;
    h->where[0] = 0;
    h->reached[0] = 0;
    h->current_ref = ref;
    h->remaining = h->budget;
    h->armed = 0;
    h->mark = h->mark == RH_STEP ? RH_STEP - 1 : RH_STEP;
    if (h->budget > 0 || h->backstop_ms || h->run_backstop_ms) {
        rh_active_host = h;
        pthread_t self = pthread_self();
        if (!atomic_load_explicit(&h->has_cpu_clock, memory_order_relaxed) || !pthread_equal(self, h->caller)) note_thread(h, self);
        atomic_fetch_add_explicit(&h->seq, 1, memory_order_relaxed);
        atomic_store_explicit(&h->in_call, 1, memory_order_relaxed);
        if (rh_cpu_stop(h) == RH_STOP_RUN_CPU) rh_arm(h, 1); /* the run is past its backstop: stop at once */
        else if (h->budget > 0 && h->exact && !rh_is_straight(h, L, -(nargs + 1), ref)) rh_arm(h, RH_STEP);
    }
    h->protected_zone = 1;
    int status = lua_pcall(L, nargs, nresults, RH_HANDLER_SLOT);
    h->protected_zone = 0;
    atomic_store_explicit(&h->in_call, 0, memory_order_relaxed);
    if (h->armed) {
        rh_disarm(L);
        h->armed = 0;
    }
    h->depth = 0;
    h->nesting = 0;
    if (status == LUA_OK) h->stop = RH_STOP_NONE;
    h->last_stop = h->stop;
    if (status != LUA_OK) memcpy(h->last_where, h->where, sizeof h->last_where);
    if (h->stop == RH_STOP_MEMORY) lua_gc(L, LUA_GCCOLLECT); /* give the next call its room back */
    return status;
}
