/* The watchdog: a thread per host that wakes every grace period, reads the calling thread's CPU
 * clock, and signals that thread to arm the count hook (the watchdog budget) or to stop at its
 * next instruction (the call's and the run's CPU-time backstops); the last resort when a call is
 * stuck inside one C function. */
#include "host.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The thread whose call the watchdog may interrupt; set at each top-level call. */
__thread rh_host *rh_active_host;

void rh_forget_active(rh_host *h) {
    if (rh_active_host == h) rh_active_host = NULL;
}

/* The watchdog's signal, on the calling thread: a marked backstop stops the call at its next
 * instruction; otherwise (the watchdog budget) the count hook is armed for the budget. */
static void on_watchdog_signal(int sig) {
    (void)sig;
    rh_host *h = rh_active_host;
    if (!h || !atomic_load(&h->in_call) || h->stop != RH_STOP_NONE) return;
    if (rh_cpu_stop(h) != RH_STOP_NONE) rh_arm(h, 1);
    else if (!h->armed) rh_arm(h, RH_STEP);
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

/* Ends the process from the watchdog thread: writes `what`, then the last line reached, then
 * `advice`, to standard error, and exits with status 2. Nothing of the Lua state is safe to touch
 * from this thread, so only what the host recorded is used. */
static void end_process(rh_host *h, const char *what, const char *advice) {
    char message[1024];
    char reached[256];
    memcpy(reached, h->reached, sizeof reached);
    reached[sizeof reached - 1] = 0;
    /* The watchdog holds h->mutex while it runs, so the label is not being written. */
    int n = snprintf(message, sizeof message, "rehearse: error: %s%s%s; last line reached: %s%s\n",
                     h->run_label, h->run_label[0] ? ": " : "", what, reached[0] ? reached : "unknown", advice);
    if (n > 0) {
        ssize_t ignored = write(2, message, (size_t)n < sizeof message ? (size_t)n : sizeof message - 1);
        (void)ignored;
    }
    _exit(2);
}

/* The last resort: a call marked by its backstop is still inside one C function (the collector
 * of a pathological heap) after as long again, where no hook and no charge can stop it. */
static void stuck(rh_host *h) {
    char what[512];
    int ref = h->current_ref;
    const char *label = ref >= 0 && ref < RH_LABEL_MAX && h->labels[ref] ? h->labels[ref] : "a Lua call";
    snprintf(what, sizeof what,
        "%s: still running after %u ms of CPU time, inside one C function that nothing can interrupt (such as the "
        "garbage collector of a pathological heap)", label, 2 * h->backstop_ms);
    end_process(h, what, "");
}

/* The calling thread's CPU time in ns, or -1 when it is not known. */
static long long thread_cpu_ns(rh_host *h) {
    if (!atomic_load(&h->has_cpu_clock)) return -1;
    struct timespec ts;
    if (clock_gettime((clockid_t)atomic_load(&h->cpu_clock), &ts) != 0) return -1;
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Has the calling thread stop at its next instruction (the signal arms the count hook). */
static void interrupt(rh_host *h) { pthread_kill(h->caller, watchdog_signal()); }

/* Wakes every grace period and reads the calling thread's CPU clock. A call still running under
 * the same sequence number as at the last wake has overrun: with the watchdog budget its thread
 * is signalled to arm the count hook; past its CPU-time backstop it is marked to fail. While a
 * call runs, the thread's CPU time since the last wake counts towards the run's backstop. */
static void *watchdog_main(void *arg) {
    rh_host *h = arg;
    unsigned long seen = 0;
    long long call_since = -1; /* the thread's CPU time when the watchdog first saw the current call */
    long long last = -1;       /* ... at the last wake */
    int clock = 0;
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
        int running = atomic_load(&h->in_call);
        if (atomic_load(&h->cpu_clock) != clock) { /* the state moved to another thread */
            clock = atomic_load(&h->cpu_clock);
            last = call_since = -1;
        }
        long long cpu = thread_cpu_ns(h);
        if (running && h->run_backstop_ms && cpu >= 0 && last >= 0 && cpu > last) {
            unsigned long gen = atomic_load(&h->run_gen);
            unsigned long long total = atomic_fetch_add(&h->run_cpu_ns, (unsigned long long)(cpu - last)) + (unsigned long long)(cpu - last);
            if (total >= h->run_backstop_ms * 1000000ULL && atomic_load(&h->run_backstop_gen) != gen) {
                atomic_store(&h->run_backstop_gen, gen);
                interrupt(h);
            }
        }
        last = cpu;
        if (running && now == seen) {
            if (!h->armed && !h->exact && h->budget > 0) pthread_kill(h->caller, watchdog_signal());
            long long limit = h->backstop_ms * 1000000LL;
            if (limit > 0 && cpu >= 0 && call_since >= 0 && cpu - call_since >= limit) {
                if (atomic_load(&h->call_backstop_seq) != now) {
                    atomic_store(&h->call_backstop_seq, now);
                    interrupt(h);
                } else if (cpu - call_since >= 2 * limit) {
                    stuck(h);
                }
            }
        } else {
            call_since = cpu;
        }
        seen = now;
    }
    pthread_mutex_unlock(&h->mutex);
    return NULL;
}

void rh_start_watchdog(rh_host *h) {
    if (h->has_watchdog) return;
    int arms = !h->exact && h->budget > 0;
    if (!arms && h->backstop_ms == 0 && h->run_backstop_ms == 0) return;
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
