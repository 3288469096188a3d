/* Private to CLuaSupport: the host structure and what its files share. */
#ifndef CLUASUPPORT_HOST_H
#define CLUASUPPORT_HOST_H
#define _GNU_SOURCE
#include "CLuaSupport.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include <lauxlib.h>
#include <lualib.h>

/* Coroutines nest at most this deep inside one call (Lua's C stack limit is 200). */
#define RH_CHAIN_MAX 256
/* Blocks up to this size are pooled by 16-byte size class (Lua's tables, strings, closures are
 * mostly this small); larger ones go to malloc. */
#define RH_SMALL_MAX 512
#define RH_SMALL_CLASSES (RH_SMALL_MAX / 16)
#define RH_SLAB_SIZE (64 * 1024)
/* The main stack slots that hold the message handler and the health fast path's two keys
 * (RH_RESERVED_SLOTS in all). */
#define RH_HANDLER_SLOT 1
#define RH_STATE_KEY_SLOT 2
#define RH_METRICS_KEY_SLOT 3
/* Room an allocation may still take once the cap was hit, so the error can be built. */
#define RH_HEADROOM (1u << 20)
/* Instructions between two count-hook calls while the budget is counted. Coroutines take turns
 * at two marks (RH_STEP and RH_STEP - 1), one per top-level call, so a coroutine whose hook was
 * set in an earlier call is known and charged when it joins the current one. */
#define RH_STEP 1000
/* Labels (what a registry ref is called, e.g. "health") kept for the backstop's message. */
#define RH_LABEL_MAX 64
/* The health fast path's strings, by index. */
enum { RH_PROBE_STATE_KEY, RH_PROBE_METRICS_KEY, RH_PROBE_HEALTHY, RH_PROBE_UNHEALTHY, RH_PROBE_STRING_COUNT };

struct rh_host {
    lua_State *L;
    rh_dispatch_fn dispatch;

    /* memory: small blocks come from per-size free lists carved out of slabs */
    void *free_blocks[RH_SMALL_CLASSES + 1];
    char *slab_cursor;
    size_t slab_left;
    void **slabs; /* each slab's first word links to the previous slab, its second is its number */
    size_t slab_count;
    size_t used;
    size_t limit;
    /* Bytes the host itself allocated for its own bookkeeping (per-instance tables, registry
     * refs): they raise the cap, so they never count against the script's memory. */
    size_t host_bytes;
    size_t host_mark; /* `used` when the current host allocation began */
    int host_depth;   /* host allocations nest; the outermost one counts */
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
    int mark;  /* the hook count of this top-level call: RH_STEP or RH_STEP - 1 */
    /* how the last call (top-level or nested) ended, for the host to read after it returns */
    rh_stop last_stop;
    char last_where[256];
    /* the last sandbox rule broken, and the text raised for it (rh_refuse) */
    rh_refusal refusal;
    char refusal_text[512];
    /* the text the trampoline last raised for a failed host function (compared, never read:
     * it may be gone), and whether the message handler last saw that very string */
    const char *raised;
    int raised_unchanged;
    /* the run's budget: instructions of every call since the run began (0 = no limit) */
    long long run_budget;
    long long run_used;

    /* the CPU-time backstop: a call whose thread has spent backstop_ms of CPU time in it has
     * work the count hook cannot see (a C library function, the collector); the watchdog marks
     * the call (call_backstop_seq = its sequence number) and the call fails at its next
     * instruction or charge (RH_STOP_CPU) */
    unsigned backstop_ms;
    atomic_ulong call_backstop_seq;
    /* the run's backstop: CPU time of the calls since the last reset, sampled by the watchdog at
     * each tick; past run_backstop_ms the run's generation is marked (run_backstop_gen) and the
     * call running then, or the next one, fails (RH_STOP_RUN_CPU) */
    unsigned run_backstop_ms;
    atomic_ullong run_cpu_ns;
    atomic_ulong run_gen;
    atomic_ulong run_backstop_gen;
    /* the CPU clock of the thread running the calls (set when a call starts on a new thread) */
    atomic_int cpu_clock;
    atomic_int has_cpu_clock;
    volatile int current_ref;    /* registry ref of the innermost call's function (for its label) */
    char reached[256];           /* the last line reached, as the hook and wrappers saw it */
    char run_label[64];          /* what the process-ending messages name first ("seed 7"), or empty */
    char *labels[RH_LABEL_MAX];  /* labels by registry ref (refs above the table are unnamed) */

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

    /* Calls of a straight function (no loop, no call: at most its length in instructions, fewer
     * than a hook step) run without the count hook: the exact count of them is zero steps, as
     * the hook would have counted. Known per registry ref (and the function it held when
     * checked); only while no script could have given a value a metatable (metamethods run Lua
     * code the function's length does not bound). */
    struct { const void *function; int straight; } straight[RH_LABEL_MAX];
    int metatables;

    /* the health fast path's strings (probe.c): the states' registry refs, every string's object */
    int probe_refs[RH_PROBE_STRING_COUNT];
    const void *probe_pointers[RH_PROBE_STRING_COUNT];
};

/* The hook count of coroutines that joined the current call. It differs from the main thread's
 * (which a new coroutine inherits), so a coroutine that has not yet been counted is known. */
static inline int rh_coroutine_mark(const rh_host *h) { return h->mark - 2; }

static inline rh_host *host_of(lua_State *L) { return *(rh_host **)lua_getextraspace(L); }

/* The backstop the watchdog marked for the running call or run, if any. */
static inline rh_stop rh_cpu_stop(rh_host *h) {
    if (atomic_load_explicit(&h->call_backstop_seq, memory_order_relaxed) == atomic_load_explicit(&h->seq, memory_order_relaxed))
        return RH_STOP_CPU;
    if (atomic_load_explicit(&h->run_backstop_gen, memory_order_relaxed) == atomic_load_explicit(&h->run_gen, memory_order_relaxed))
        return RH_STOP_RUN_CPU;
    return RH_STOP_NONE;
}

/* The host whose top-level call runs on this thread (the watchdog signal's target; watchdog.c). */
extern __thread rh_host *rh_active_host;

/* alloc.c */
void *rh_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
void rh_free_slabs(rh_host *h);

/* budget.c */
void rh_budget_hook(lua_State *L, lua_Debug *ar);
void rh_arm(rh_host *h, int count);
void rh_disarm(lua_State *L);
void rh_note_reached(lua_State *L, int level);
/* Whether the function at stack index `index`, held at registry ref `ref`, is straight (see
 * rh_host.straight); checks it the first time. */
int rh_is_straight(rh_host *h, lua_State *L, int index, int ref);
/* Charges `units` of work done in C against the current call's budget; raises when spent. */
void rh_charge(lua_State *L, lua_Integer units);
static inline size_t rh_cap(const rh_host *h) { return h->limit + h->host_bytes; }

/* watchdog.c */
void rh_start_watchdog(rh_host *h);
void rh_stop_watchdog(rh_host *h);
void rh_forget_active(rh_host *h);

/* probe.c: interns the fast path's strings; called once, on a new state. */
void rh_intern_probe_strings(rh_host *h);

/* pattern.c: sets the counted find, match, gmatch and gsub in the string table at `index`. */
void rh_open_patterns(lua_State *L, int index);

/* budget.c: the message handler of every call the host makes. */
int rh_message_handler(lua_State *L);
#endif
