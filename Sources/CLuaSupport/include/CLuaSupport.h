#ifndef CLUASUPPORT_H
#define CLUASUPPORT_H
/* The little C that may longjmp. Every Lua API call that can raise an error runs here or inside a
 * protected call started here; Swift code is only ever entered from a trampoline that turns its
 * status into lua_error after the Swift frame has returned. */
#include <stddef.h>
#include <stdint.h>
#include <lua.h>

/* What a Swift function called from Lua returns: its result count, or RH_SWIFT_ERROR when it
 * left an error message on the stack for the trampoline to raise. */
#define RH_SWIFT_ERROR (-1)

/* Why a protected call stopped, beyond Lua's own status. */
typedef enum rh_stop {
    RH_STOP_NONE = 0,
    RH_STOP_BUDGET = 1, /* the instruction budget was spent */
    RH_STOP_MEMORY = 2, /* the memory cap refused an allocation */
    RH_STOP_HOST = 3,   /* the host ended the call (rh_abort_call), e.g. a nested call failed */
    RH_STOP_RUN_BUDGET = 4, /* the run's instruction budget, across all its calls, was spent */
    RH_STOP_CPU = 5,        /* the call's CPU-time backstop passed (work no budget counts) */
    RH_STOP_RUN_CPU = 6     /* the run's CPU-time backstop passed */
} rh_stop;

/* A rule of the sandbox a script's call broke (the sandbox raised it as an error). */
typedef enum rh_refusal {
    RH_REFUSAL_NONE = 0,
    RH_REFUSAL_FINALIZER = 1,      /* setmetatable with __gc */
    RH_REFUSAL_WEAK_KEYS = 2,      /* a weak-keyed table (__mode = 'k') */
    RH_REFUSAL_FORMAT_POINTER = 3, /* string.format's %p */
    RH_REFUSAL_TEXT_CHUNKS = 4,    /* load of something other than a text chunk */
    RH_REFUSAL_COROUTINE_DEPTH = 5 /* coroutines nested past the bound */
} rh_refusal;

/* The Swift side of every Lua-callable Swift function: one entry point, told which closure. */
typedef int (*rh_dispatch_fn)(lua_State *L, void *closure);

typedef struct rh_host rh_host;

/* Creates a host and its Lua state with a counting allocator capped at memory_limit bytes
 * (0 = no cap). Returns NULL when the state cannot be created. */
rh_host *rh_host_new(size_t memory_limit, rh_dispatch_fn dispatch);
/* Closes the Lua state, stops the watchdog and frees the host. Call exactly once. */
void rh_host_free(rh_host *h);
lua_State *rh_host_state(rh_host *h);
/* The host a state (or any of its threads) belongs to. */
rh_host *rh_host_of(lua_State *L);

/* Instruction budget per top-level call (0 = none). exact != 0 counts every instruction with a
 * count hook for the whole call; exact == 0 arms that hook only once a call has run longer than
 * grace_ms of wall time, so a call that finishes in time pays nothing. */
void rh_host_set_budget(rh_host *h, long long instructions, int exact, unsigned grace_ms);
void rh_host_set_memory_limit(rh_host *h, size_t bytes);
size_t rh_host_memory_used(rh_host *h);
/* Bytes the host allocated for itself between rh_host_alloc_begin and rh_host_alloc_end raise the
 * cap by as much: the host's bookkeeping never counts against a script's memory. (Should the
 * collector free script garbage meanwhile, the host is credited less, never more.) */
void rh_host_alloc_begin(rh_host *h);
void rh_host_alloc_end(rh_host *h);
size_t rh_host_bytes(rh_host *h);
/* A call whose thread has spent `ms` of CPU time in it (0 = never) fails with RH_STOP_CPU at its
 * next instruction or charged step: work inside C library functions and the collector is
 * invisible to the count hook. Measured on the thread's CPU clock, so a loaded machine does not
 * trip it. Only a call still inside one C function after twice that ends the process (exit
 * status 2, naming the call's label and the last line reached): nothing can interrupt it. */
void rh_host_set_backstop(rh_host *h, unsigned ms);
/* CPU-time backstop of a whole run: at each tick the watchdog adds the calling thread's CPU time
 * since the last tick when a call is running; once the sum passes `ms` (0 = never), the call
 * running then, or the next one, fails with RH_STOP_RUN_CPU. A last resort for runs of many
 * calls each spending long in C work no budget counts. */
void rh_host_set_run_backstop(rh_host *h, unsigned ms);
/* The instructions all calls of one run may execute together, counted exactly (0 = no limit;
 * only with an exact budget). Nested calls count too. rh_host_reset_run_time starts a new run. */
void rh_host_set_run_budget(rh_host *h, long long instructions);
/* Charges `units` of the host's own work on what a call returned (copying, judging) to the run's
 * instructions; returns whether the run's budget is now spent (exact counting only). */
int rh_host_charge_run(rh_host *h, long long units);
/* Charges `units` of the host's own work, done for the running call from inside a host function
 * on thread L, to the call's budget and the run's, without raising: when that spends either, the
 * stop is noted (at L's line) and the call stops at its next instruction, which pcall cannot
 * catch. Returns 1 when it stopped the call. */
int rh_charge_quietly(lua_State *L, long long units);
/* Instructions counted since the run began (in steps of the count hook). */
long long rh_host_run_used(rh_host *h);
/* What the backstops' messages name first, e.g. "seed 7" (copied, truncated to 63 bytes). */
void rh_host_set_run_label(rh_host *h, const char *label);
/* Starts the run's counts (CPU time spent in calls, instructions) from zero. */
void rh_host_reset_run_time(rh_host *h);
/* The end of the host's own setup: metatables set so far are the host's, out of scripts' reach.
 * From now on a script that sets or reads one turns off the straight-call fast path. */
void rh_host_seal_sandbox(rh_host *h);
/* Whether a top-level call of the function at registry ref `ref` runs without the count hook:
 * a straight function (no loop, no call, shorter than a hook step) while no script has set or
 * read a metatable. */
int rh_function_is_straight(rh_host *h, int ref);
/* Drops registry ref `ref` (luaL_unref) and what the host knew of the function it held. */
void rh_release_ref(rh_host *h, int ref);
/* Names registry ref `ref` (a function the host calls) for the backstop's message. */
void rh_label_ref(rh_host *h, int ref, const char *label);
/* Ends the running call from inside it: every following instruction raises, past any pcall, and
 * the call fails with rh_last_stop() == RH_STOP_HOST. For a host function that must not let the
 * script continue (a nested call failed). */
void rh_abort_call(rh_host *h);

/* For a process that runs scenario after scenario (a sweep, the benchmark): memory freed after
 * one run stays with the process for the next (glibc: no trimming of the heap, no separate
 * mapping for large blocks), so each run does not fault its pages in again. */
void rh_keep_freed_memory(void);

/* Stack slots of the main thread that belong to the host (the message handler, then the health
 * fast path's two keys): a host never sets the main stack's top below this. */
#define RH_RESERVED_SLOTS 3

/* The call funnel: calls the function below nargs arguments with a traceback message handler,
 * under the budget and the memory cap. Returns Lua's status. A call made while another runs (a
 * host function calling back into Lua) gets its own budget, the cap and the handler too. `ref`
 * is the function's registry ref (for its label), or LUA_NOREF. The caller must have made room
 * for one more stack slot (lua_checkstack). */
int rh_pcall(lua_State *L, int nargs, int nresults, int ref);
/* After a failed rh_pcall: what stopped it, and where (chunk:line, or ""). */
rh_stop rh_last_stop(rh_host *h);
const char *rh_last_where(rh_host *h);
/* The last sandbox rule a call broke, and the text it raised (without the place), until
 * rh_clear_refusal. */
rh_refusal rh_last_refusal(rh_host *h);
const char *rh_last_refusal_text(rh_host *h);
void rh_clear_refusal(rh_host *h);
/* Whether the last failed call's error reached the host as the very string a failed host
 * function raised, unchanged by the script (caught and raised again, wrapped); cleared. */
int rh_take_raised_unchanged(rh_host *h);
/* A rank for an object of the state (a table, a function) that is the same on every run of the
 * same script, or -1 when it is not in the small-block slabs. */
long long rh_object_rank(rh_host *h, const void *p);

/* What rh_call_health found. */
/* (negative: the call failed with Lua status -result; its error message is on top) */
#define RH_HEALTH_NIL 0          /* it returned nil */
#define RH_HEALTH_HEALTHY 1      /* a table whose applicationHealthState is "Healthy" */
#define RH_HEALTH_UNHEALTHY 2    /* ... is "Unhealthy" */
#define RH_HEALTH_OTHER 3        /* anything else, for the host's general reader */
#define RH_HEALTH_METRICS_KEPT 4 /* or'ed in: its customMetrics (or nil) went to latest[slot] */
#define RH_HEALTH_LEFT 8         /* or'ed in: the result is on top; the caller pops it */
#define RH_HEALTH_NO_ROOM (-1000) /* the stack had no room for the call; nothing was pushed */

/* The health call's fast path: calls the function kept at registry ref `function_ref` with the
 * table kept at `vm_ref` and the time (whole seconds as an integer, else a float) through
 * rh_pcall, and reads the usual answer raw: the state by its interned string and, when
 * `latest_ref` is not LUA_NOREF, `customMetrics` copied into `latest[slot]` unless the table also
 * spells it in another casing. The stack is as it was unless RH_HEALTH_LEFT is set (the result
 * is on top) or the call failed (its message is on top). */
int rh_call_health(lua_State *L, int function_ref, int vm_ref, long long now_ms, int latest_ref, long long slot);

/* Pushes a Lua function that calls the Swift closure `closure` (kept alive by the caller). */
void rh_push_swift_function(lua_State *L, void *closure);

/* Replaces the globals with the sandbox: an allowlist of the standard library, with load
 * text-only, setmetatable refusing __gc, collectgarbage limited, coroutines under the budget.
 * Host hooks (print, require, random, clocks) are installed afterwards by the Swift side. */
int rh_open_sandbox(lua_State *L);
#endif
