/* The instruction budget: count hook, watchdog thread and signal, and the call funnel. */
#include "host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>


void rh_budget_hook(lua_State *L, lua_Debug *ar) {
    rh_host *h = host_of(L);
    if (h->stop == RH_STOP_NONE) {
        h->remaining -= RH_STEP;
        if (h->remaining > 0) return;
        h->stop = RH_STOP_BUDGET;
        if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0)
            snprintf(h->where, sizeof h->where, "%s:%d", ar->short_src, ar->currentline);
        rh_arm(h, 1);
    } else if (h->where[0] == 0 && lua_getinfo(L, "Sl", ar) && ar->currentline > 0) {
        snprintf(h->where, sizeof h->where, "%s:%d", ar->short_src, ar->currentline);
    }
    if (h->stop == RH_STOP_MEMORY) luaL_error(L, "memory limit exceeded");
    luaL_error(L, "instruction budget exceeded");
}

/* Sets the count hook on every thread of the current call. Safe from a signal handler: Lua
 * allows lua_sethook asynchronously, and the chain is only appended to after its slot is set. */
void rh_arm(rh_host *h, int count) {
    h->armed = 1;
    int n = h->depth;
    for (int i = 0; i < n; i++) lua_sethook(h->chain[i], rh_budget_hook, LUA_MASKCOUNT, count);
}

void rh_disarm(lua_State *L) { lua_sethook(L, NULL, 0, 0); }

/* The thread whose call the watchdog may interrupt; set at each top-level call. */
static __thread rh_host *active_host;

void rh_forget_active(rh_host *h) {
    if (active_host == h) active_host = NULL;
}

static void on_watchdog_signal(int sig) {
    (void)sig;
    rh_host *h = active_host;
    if (h && atomic_load(&h->in_call) && !h->armed && h->stop == RH_STOP_NONE) rh_arm(h, RH_STEP);
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

void rh_start_watchdog(rh_host *h) {
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

void rh_stop_watchdog(rh_host *h) {
    if (!h->has_watchdog) return;
    pthread_mutex_lock(&h->mutex);
    h->quit = 1;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->mutex);
    pthread_join(h->watchdog, NULL);
    h->has_watchdog = 0;
    h->quit = 0;
}



/* Message handler: any error value becomes "message\nstack traceback:...". */
int rh_message_handler(lua_State *L) {
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
            rh_arm(h, RH_STEP);
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
        rh_disarm(L);
        h->armed = 0;
    }
    h->depth = 0;
    h->nesting--;
    if (status == LUA_OK) h->stop = RH_STOP_NONE;
    if (h->stop == RH_STOP_MEMORY) lua_gc(L, LUA_GCCOLLECT); /* give the next call its room back */
    return status;
}
