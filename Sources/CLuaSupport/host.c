/* Hosts: creation, limits, the message handler and the Swift trampoline. */
#include "host.h"

#include <limits.h>
#include <malloc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static int rh_panic(lua_State *L) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "rehearse: unprotected Lua error: %s\n", msg ? msg : "(not a string)");
    abort();
}

rh_host *rh_host_new(size_t memory_limit, rh_dispatch_fn dispatch) {
    rh_host *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->limit = memory_limit;
    h->dispatch = dispatch;
    h->grace_ms = 10;
    h->mark = RH_STEP;
    h->current_ref = LUA_NOREF;
    atomic_store(&h->run_gen, 1);
    atomic_store(&h->call_backstop_seq, ULONG_MAX); /* a sequence number no call has */
    pthread_mutex_init(&h->mutex, NULL);
    pthread_cond_init(&h->cond, NULL);
    h->L = lua_newstate(rh_alloc, h);
    if (!h->L) {
        rh_free_slabs(h);
        free(h);
        return NULL;
    }
    *(rh_host **)lua_getextraspace(h->L) = h;
    lua_atpanic(h->L, rh_panic);
    /* Generational collection: a probe's reply tables die young and are reused from the free
     * lists while still in cache, where the incremental collector lets the heap grow to twice
     * the live data first. For the 1,000-instance bench (`rehearse-bench ir --cache`): 2% fewer
     * instructions a probe, and 59% fewer last-level misses a run with a 2 MiB cache (a core's
     * share of L3 when 16 runs share it); with 8 MiB a run fits either way. */
    lua_gc(h->L, LUA_GCGEN, 0, 0);
    /* The message handler and the health fast path's keys live at the bottom of the main stack
     * for the state's whole life (RH_RESERVED_SLOTS), so a call pays no push and rotate for them. */
    lua_pushcfunction(h->L, rh_message_handler);
    rh_intern_probe_strings(h);
    if (lua_gettop(h->L) != RH_RESERVED_SLOTS) abort();
    return h;
}

void rh_host_free(rh_host *h) {
    if (!h) return;
    rh_stop_watchdog(h);
    rh_forget_active(h);
    lua_close(h->L);
    rh_free_slabs(h);
    for (int i = 0; i < RH_LABEL_MAX; i++) free(h->labels[i]);
    pthread_mutex_destroy(&h->mutex);
    pthread_cond_destroy(&h->cond);
    free(h);
}

lua_State *rh_host_state(rh_host *h) { return h->L; }
rh_host *rh_host_of(lua_State *L) { return host_of(L); }

void rh_keep_freed_memory(void) {
#ifdef M_MMAP_THRESHOLD
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
#endif
}

void rh_host_set_budget(rh_host *h, long long instructions, int exact, unsigned grace_ms) {
    rh_stop_watchdog(h);
    h->budget = instructions > 0 ? instructions : 0;
    h->exact = exact;
    /* With an exact budget the watchdog only keeps the wall-clock backstop: a tick of 100 ms
     * is enough for that, where the watchdog budget needs its grace time. */
    h->grace_ms = exact ? 100 : (grace_ms ? grace_ms : 1);
    rh_start_watchdog(h);
}

void rh_host_set_run_backstop(rh_host *h, unsigned ms) {
    rh_stop_watchdog(h);
    h->run_backstop_ms = ms;
    rh_start_watchdog(h);
}

void rh_host_set_run_label(rh_host *h, const char *label) {
    pthread_mutex_lock(&h->mutex);
    snprintf(h->run_label, sizeof h->run_label, "%s", label ? label : "");
    pthread_mutex_unlock(&h->mutex);
}

void rh_host_reset_run_time(rh_host *h) {
    atomic_fetch_add(&h->run_gen, 1); /* a mark the watchdog left for the last run no longer counts */
    atomic_store(&h->run_cpu_ns, 0);
    h->run_used = 0;
}

void rh_host_seal_sandbox(rh_host *h) { h->metatables = 0; }

void rh_release_ref(rh_host *h, int ref) {
    if (ref >= 0 && ref < RH_LABEL_MAX) h->straight[ref].function = NULL;
    luaL_unref(h->L, LUA_REGISTRYINDEX, ref);
}

void rh_host_set_run_budget(rh_host *h, long long instructions) { h->run_budget = instructions > 0 ? instructions : 0; }

long long rh_host_run_used(rh_host *h) { return h->run_used; }

void rh_host_set_backstop(rh_host *h, unsigned ms) {
    rh_stop_watchdog(h);
    h->backstop_ms = ms;
    rh_start_watchdog(h);
}

void rh_label_ref(rh_host *h, int ref, const char *label) {
    if (ref < 0 || ref >= RH_LABEL_MAX) return;
    free(h->labels[ref]);
    h->labels[ref] = label ? strdup(label) : NULL;
}

void rh_host_set_memory_limit(rh_host *h, size_t bytes) { h->limit = bytes; }
size_t rh_host_memory_used(rh_host *h) { return h->used; }
size_t rh_host_bytes(rh_host *h) { return h->host_bytes; }

void rh_host_alloc_begin(rh_host *h) {
    if (h->host_depth++ > 0) return;
    h->host_mark = h->used;
}

void rh_host_alloc_end(rh_host *h) {
    if (--h->host_depth > 0) return;
    if (h->used > h->host_mark) h->host_bytes += h->used - h->host_mark;
}
rh_stop rh_last_stop(rh_host *h) { return h->last_stop; }
const char *rh_last_where(rh_host *h) { return h->last_where; }
rh_refusal rh_last_refusal(rh_host *h) { return h->refusal; }
const char *rh_last_refusal_text(rh_host *h) { return h->refusal_text; }
int rh_take_raised_unchanged(rh_host *h) {
    int unchanged = h->raised_unchanged;
    h->raised_unchanged = 0;
    return unchanged;
}
void rh_clear_refusal(rh_host *h) {
    h->refusal = RH_REFUSAL_NONE;
    h->refusal_text[0] = '\0';
}


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
        h->raised = lua_tostring(L, -1);
        return lua_error(L);
    }
    if (zone && h->limit && h->used > rh_cap(h) && h->stop == RH_STOP_NONE) {
        h->stop = RH_STOP_MEMORY;
        rh_arm(h, 1);
        return luaL_error(L, "memory limit exceeded");
    }
    return n;
}

void rh_push_swift_function(lua_State *L, void *closure) {
    lua_pushlightuserdata(L, closure);
    lua_pushcclosure(L, trampoline, 1);
}
