/*
 * A held CUDA stream (backend.h, queue_hold): a host function enqueued on
 * the stream (cuLaunchHostFunc) that waits until the host lets it go, so
 * that the stream's later work does not start before then. The wait ends
 * by itself after HOLD_LIMIT_NS all the same: an enqueue between hold and
 * release that waited for the stream would otherwise wait forever (the
 * shim's rule keeps our own code from doing so; this bounds the driver's,
 * such as a first launch that loads code). The host function makes no
 * CUDA call, as the driver requires.
 */
#include "backend/cuda/cuda_private.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#define HOLD_LIMIT_NS 100000000L   /* 100 ms: far more than a held enqueue takes */

/* Shared by the host function and the releasing thread: freed by the
 * last of the two to be done with it. */
struct gm_hold {
    pthread_mutex_t lock;
    pthread_cond_t opened;
    bool open;
    atomic_int users;
};

static void hold_drop(gm_hold *h)
{
    if (atomic_fetch_sub(&h->users, 1) == 1) {
        pthread_cond_destroy(&h->opened);
        pthread_mutex_destroy(&h->lock);
        free(h);
    }
}

/* The stream's side: waits (on the driver's callback thread) until the
 * hold is opened or HOLD_LIMIT_NS have passed. */
static void CUDA_CB hold_wait(void *arg)
{
    gm_hold *h = arg;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += HOLD_LIMIT_NS;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&h->lock);
    while (!h->open)
        if (pthread_cond_timedwait(&h->opened, &h->lock, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&h->lock);
    hold_drop(h);
}

gm_status gm_cu_queue_hold(gm_device *dev, int queue, gm_hold **out)
{
    const gm_cu_api *cu = gm_cu_load(NULL, 0);
    if (!cu || !cu->LaunchHostFunc)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "this driver has no cuLaunchHostFunc");
    CUstream stream = gm_cu_stream(dev, queue);
    if (!stream)
        return dev->err.code;
    gm_hold *h = calloc(1, sizeof *h);
    if (!h)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&h->opened, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&h->lock, NULL);
    atomic_init(&h->users, 2);
    CUresult rc = cu->LaunchHostFunc(stream, hold_wait, h);
    if (rc != CUDA_SUCCESS) {
        atomic_store(&h->users, 1);   /* the host function will never run */
        hold_drop(h);
        return gm_cu_fail(dev, rc, "cuLaunchHostFunc");
    }
    *out = h;
    return GM_OK;
}

void gm_cu_queue_release(gm_device *dev, gm_hold *h)
{
    (void)dev;
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    h->open = true;
    pthread_cond_signal(&h->opened);
    pthread_mutex_unlock(&h->lock);
    hold_drop(h);
}
