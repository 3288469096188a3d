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

static inline rh_host *host_of(lua_State *L) { return *(rh_host **)lua_getextraspace(L); }

/* alloc.c */
void *rh_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
void rh_free_slabs(rh_host *h);

/* budget.c */
void rh_budget_hook(lua_State *L, lua_Debug *ar);
void rh_arm(rh_host *h, int count);
void rh_disarm(lua_State *L);
void rh_start_watchdog(rh_host *h);
void rh_stop_watchdog(rh_host *h);
void rh_forget_active(rh_host *h);

/* host.c */
int rh_message_handler(lua_State *L);
#endif
