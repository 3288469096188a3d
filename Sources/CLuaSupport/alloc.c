/* The counting allocator: small blocks pooled by size class, a cap on growth. */
#include "host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>



/* Called only when growth would pass the cap: refuses inside a protected call (the first refusal
 * arms the sticky stop), allows it outside, where Swift code must never see an error raised. */
static __attribute__((noinline)) int refuse_growth(rh_host *h, size_t after) {
    if (!h->protected_zone) return 0;
    size_t cap = rh_cap(h) + (h->stop == RH_STOP_MEMORY ? RH_HEADROOM : 0);
    if (after <= cap) return 0;
    if (h->stop == RH_STOP_NONE) {
        h->stop = RH_STOP_MEMORY;
        /* Lua calls no message handler for a memory error, so the position is taken now, from
         * the innermost running thread: the nearest Lua line (a C function such as string.rep
         * at level 0 is skipped). lua_getinfo with "Sl" allocates nothing. */
        if (h->where[0] == 0 && h->depth > 0) {
            rh_note_reached(h->chain[h->depth - 1], 0);
            memcpy(h->where, h->reached, sizeof h->where);
        }
        rh_arm(h, 1); /* sticky: the next instruction raises again, past any pcall */
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
        slab[1] = (void *)(uintptr_t)h->slab_count++;
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

void rh_free_slabs(rh_host *h) {
    void **slab = h->slabs;
    while (slab) {
        void **previous = *slab;
        free(slab);
        slab = previous;
    }
}

/* Lua's allocator contract: osize is the block's size whenever ptr is not NULL, so a block's
 * size class is known without a header. */
void *rh_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
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

/* A rank for a block of this state: its slab's number and its offset there. Slabs are numbered
 * in the order they were made and blocks are handed out in the order the state asks for them, so
 * on every run of the same script the same object gets the same rank, whatever addresses malloc
 * gives: a deterministic order for tables and functions. -1 for a block outside the slabs. */
long long rh_object_rank(rh_host *h, const void *p) {
    const char *q = p;
    for (void **slab = h->slabs; slab; slab = *slab) {
        const char *base = (const char *)slab;
        if (q >= base + 16 && q < base + RH_SLAB_SIZE)
            return (long long)(uintptr_t)slab[1] * RH_SLAB_SIZE + (long long)(q - base);
    }
    return -1;
}
