/* The program cache (program_cache.h). */
#include "device/program_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CACHED 64

typedef struct {
    char key[320];                /* program, variant, defines */
    gm_program *prog;
} cached_program;

static const gm_backend *under;   /* the table the cache forwards to */
static gm_backend table;
static cached_program cached[MAX_CACHED];
static int n_cached;
static double build_seconds, alloc_seconds, copy_seconds;

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static gm_status cache_build(gm_device *dev, const char *program, const char *variant, const char *extra,
                             gm_program **out)
{
    char key[sizeof cached[0].key];
    int n = snprintf(key, sizeof key, "%s\n%s\n%s", program, variant ? variant : "", extra ? extra : "");
    bool keyable = n > 0 && (size_t)n < sizeof key;
    for (int i = 0; keyable && i < n_cached; i++)
        if (strcmp(cached[i].key, key) == 0) {
            *out = cached[i].prog;
            return GM_OK;
        }
    double t0 = seconds_now();
    gm_status st = under->program_build(dev, program, variant, extra, out);
    build_seconds += seconds_now() - t0;
    if (st == GM_OK && keyable && n_cached < MAX_CACHED) {
        snprintf(cached[n_cached].key, sizeof cached[n_cached].key, "%s", key);
        cached[n_cached++].prog = *out;
    }
    return st;
}

static gm_status timed_alloc(gm_device *dev, gm_mem_kind kind, size_t bytes, gm_buffer *out)
{
    double t0 = seconds_now();
    gm_status st = under->alloc(dev, kind, bytes, out);
    alloc_seconds += seconds_now() - t0;
    return st;
}

static gm_status timed_copy(gm_device *dev, int queue, gm_buffer *dst, size_t dst_off, const gm_buffer *src,
                            size_t src_off, size_t bytes, bool async)
{
    double t0 = seconds_now();
    gm_status st = under->copy(dev, queue, dst, dst_off, src, src_off, bytes, async);
    copy_seconds += seconds_now() - t0;
    return st;
}

/* A cached program stays until gm_program_cache_release; others go now. */
static void cache_release(gm_device *dev, gm_program *prog)
{
    for (int i = 0; i < n_cached; i++)
        if (cached[i].prog == prog)
            return;
    under->program_release(dev, prog);
}

void gm_program_cache_install(gm_device *dev)
{
    if (under)
        return;
    under = dev->backend;
    table = *under;
    table.program_build = cache_build;
    table.program_release = cache_release;
    table.alloc = timed_alloc;
    table.copy = timed_copy;
    dev->backend = &table;
    build_seconds = alloc_seconds = copy_seconds = 0;
}

void gm_program_cache_release(gm_device *dev)
{
    if (!under)
        return;
    for (int i = 0; i < n_cached; i++)
        under->program_release(dev, cached[i].prog);
    n_cached = 0;
    dev->backend = under;
    under = NULL;
}

void gm_program_cache_seconds(gm_program_cache_times *t)
{
    t->build = build_seconds;
    t->alloc = alloc_seconds;
    t->copy = copy_seconds;
}
