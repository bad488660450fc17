/* The hung-device watchdog: see watchdog.h. */
#include "backend/watchdog.h"

#include "lib/exit_codes.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static _Atomic long long call_started_ns;    /* 0: no call under way */
static _Atomic(const char *) call_op;
static int call_depth;                       /* the calling thread's nesting */

static pthread_t thread;
static bool running;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static bool stopping;
static unsigned limit;
static const char *owner;
static _Atomic(gm_hang_hook) hook;
static void *_Atomic hook_ctx;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void gm_watchdog_call_begin(const char *op)
{
    if (call_depth++ > 0)
        return;
    atomic_store(&call_op, op);
    atomic_store(&call_started_ns, now_ns());
}

void gm_watchdog_call_end(void)
{
    if (--call_depth > 0)
        return;
    atomic_store(&call_started_ns, 0);
}

void gm_watchdog_set_hook(gm_hang_hook h, void *ctx)
{
    atomic_store(&hook, NULL);
    atomic_store(&hook_ctx, ctx);
    atomic_store(&hook, h);
}

/* Ends the process: the stuck call will not return. */
static void fire(const char *op, double seconds)
{
    fprintf(stderr, "%s: the device has not answered a %s call for %.0f s (--hang-timeout %u): it is hung; "
                    "stopping (finished results are kept)\n", owner, op, seconds, limit);
    gm_hang_hook h = atomic_load(&hook);
    if (h)
        h(op, seconds, atomic_load(&hook_ctx));
    fflush(NULL);
    _exit(GM_EXIT_DEVICE);
}

static void *watch(void *arg)
{
    (void)arg;
    /* Look often enough to fire within a tenth of the limit (or 1 s). */
    long long period_ns = (long long)limit * 100000000LL;
    if (period_ns > 1000000000LL)
        period_ns = 1000000000LL;
    pthread_mutex_lock(&lock);
    while (!stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long long ns = until.tv_nsec + period_ns;
        until.tv_sec += ns / 1000000000LL;
        until.tv_nsec = ns % 1000000000LL;
        pthread_cond_timedwait(&wake, &lock, &until);
        if (stopping)
            break;
        long long started = atomic_load(&call_started_ns);
        const char *op = atomic_load(&call_op);
        double seconds = started ? (double)(now_ns() - started) * 1e-9 : 0;
        if (started && seconds > limit)
            fire(op ? op : "device", seconds);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int gm_watchdog_start(unsigned limit_s, const char *who)
{
    if (limit_s == 0 || running)
        return 0;
    limit = limit_s;
    owner = who;
    stopping = false;
    /* The thread takes no signal: SIGINT and SIGTERM must reach the main
     * thread, whose blocking waits they interrupt (interrupt.h). */
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    int rc = pthread_create(&thread, NULL, watch, NULL);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    running = true;
    return 0;
}

void gm_watchdog_stop(void)
{
    if (!running)
        return;
    pthread_mutex_lock(&lock);
    stopping = true;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    running = false;
    gm_watchdog_set_hook(NULL, NULL);
}
