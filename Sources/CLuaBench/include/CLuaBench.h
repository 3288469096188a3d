#ifndef CLUABENCH_H
#define CLUABENCH_H
/* The benchmark's reference: the health-call loop a C host would write against Lua's C API. */
#include <stddef.h>
#include <stdint.h>

/* What one loop computed, so hosts can check they did the same work. */
typedef struct clb_result {
    double ns_per_call;
    int64_t unhealthy;  /* calls whose state was "Unhealthy" */
    int64_t phase_sum;  /* sum of PhaseOrderingNumber */
    int64_t skipped;    /* calls with SkipUpgrade true */
} clb_result;

/* Calls the script's global `health(id, t)` `calls` times from C, reading the state string and
 * both metrics of every result. Returns ns_per_call < 0 when the script fails. */
clb_result clb_c_loop(const char *script, int64_t calls);

/* Calls the script's global `function_name(vm, now)` `calls` times from C, with `instances`
 * prebuilt vm tables ({ id, name, zone, model = { version = 1 } }) in turn and now = call / instances * 5,
 * reading the state string and both metrics of every result. */
clb_result clb_c_vm_loop(const char *script, const char *function_name, int64_t calls, int instances);

/* Runs the same loop in Lua itself (the call and the field reads are Lua code). */
clb_result clb_lua_loop(const char *script, int64_t calls);
/* The limits the scenario's Lua state runs under, for the floor to run under the same. */
typedef struct clb_limits {
    size_t memory_bytes;
    long long instructions;     /* per call, counted exactly */
    long long run_instructions; /* for all calls together */
    unsigned backstop_ms;
    unsigned run_backstop_ms;
} clb_limits;

/* The fair floor of a scenario's health calls: what a C host does for the same Lua work with the
 * same parts as rehearse (its allocator, sandbox, exact budget and call funnel), `instances`
 * vm tables built as the scenario runtime builds them, and the answer read the plain C way (the
 * state with lua_getfield and strcmp, customMetrics kept in a `latest` table slot per
 * instance). Counts states other than Healthy/Unhealthy in `skipped`. Call i probes instance
 * i % instances at second (i / instances) * 5. With `upgraded_ms`, instance k's table changes as
 * rehearse changes it when its upgrade ends at upgraded_ms[k] (< 0: never): from its first call
 * at or after that time, `model` is the model 2 table, `startedAt` that time and `lastOperation`
 * { endedAt, kind = "upgrade", outcome = "succeeded" }. */
clb_result clb_floor_loop(const char *script, const char *function_name, int64_t calls, int instances, clb_limits limits,
                          const int64_t *upgraded_ms);
#endif
