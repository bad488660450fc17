/*
 * The oom suite's allocator probes, in this process (the worker's side):
 * external fragmentation after the fragmented pattern's preparation, and
 * allocation and free latency by block size and fill level.
 */
#include "bench/oom/probe.h"
#include "lib/stats.h"

#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)
#define LATENCY_REPS 25
#define BALLAST_CHUNK (64 * MIB)
#define MAX_BALLAST 4096

const uint64_t gm_latency_sizes[GM_LATENCY_SIZES] = {4096, 65536, MIB, 16 * MIB, 64 * MIB};

static uint64_t free_under_cap(gm_device *dev)
{
    uint64_t free_b;
    gm_device_free_memory(dev, GM_FREE_UNKNOWN_TOTAL_LIVE, &free_b);
    return free_b;
}

static void failed(gm_device *dev, gm_status st, gm_probe_result *r)
{
    r->outcome = st == GM_ERR_OOM ? GM_PROBE_OOM : GM_PROBE_FAILED;
    r->failed_as = gm_row_status_of(st);
    r->device_lost = st == GM_ERR_DEVICE_LOST;
    snprintf(r->note, sizeof r->note, "%s", dev->err.msg);
}

void gm_probe_fragment_local(gm_device *dev, const gm_bench_opts *o, double fill, gm_probe_result *r)
{
    memset(r, 0, sizeof *r);
    gm_bench_opts at_fill = *o;    /* read only: the copy shares o's lists */
    at_fill.frag_fill = fill;
    gm_pattern_env env;
    gm_pattern_env_init(&env, dev, &at_fill);
    gm_pattern pat;
    gm_status st = gm_pattern_begin(&pat, &env, GM_PATTERN_FRAGMENTED, NULL, 0);
    if (st != GM_OK) {
        failed(dev, st, r);
    } else {
        uint64_t free_b = free_under_cap(dev);
        uint64_t lo = 0, hi = free_b / MIB + 1;   /* lo MiB fits; hi does not */
        /* The first probe asks for all that is free: an allocator that maps
         * scattered pages into one range (a CPU device's, a GPU's virtual
         * memory) gives it, and the search ends at once; else bisection. */
        bool first = true;
        while (hi - lo > 1 && st == GM_OK) {
            uint64_t mid = first ? hi - 1 : lo + (hi - lo) / 2;
            first = false;
            gm_buffer buf;
            gm_status a = gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)(mid * MIB), &buf);
            if (a == GM_OK) {
                gm_device_free(dev, &buf);
                lo = mid;
            } else if (a == GM_ERR_OOM) {
                hi = mid;
            } else {
                st = a;
            }
        }
        if (st != GM_OK) {
            failed(dev, st, r);
        } else {
            r->outcome = GM_PROBE_FITS;
            r->value = lo * MIB;
            r->stats[0] = (double)free_b;
            r->stats[1] = (double)pat.fragment_bytes;
            r->stats[2] = pat.n_fragments;
            r->stats[3] = (double)pat.fill_held;
            r->stats[4] = (double)pat.fill_target;
            r->n_stats = 5;
        }
    }
    gm_pattern_end(&pat);
    gm_pattern_env_release(&env);
}

/* One allocation of `bytes` the pattern's way, and its release. */
typedef struct {
    gm_device *dev;
    gm_pattern_kind kind;
    gm_cache cache;
    gm_buffer buf;
    gm_cache_ticket ticket;
} allocator;

static gm_status take(allocator *a, uint64_t bytes)
{
    if (a->kind == GM_PATTERN_POOL)
        return gm_cache_alloc(&a->cache, bytes, &a->buf, &a->ticket);
    return gm_device_alloc(a->dev, a->kind == GM_PATTERN_ASYNC_POOL ? GM_MEM_ASYNC : GM_MEM_DEVICE, (size_t)bytes,
                           &a->buf);
}

static void give(allocator *a)
{
    gm_device_free(a->dev, &a->buf);
    if (a->kind == GM_PATTERN_POOL)
        gm_cache_free(&a->cache, &a->ticket);
}

/* Times LATENCY_REPS allocations and frees of `bytes`; fills s[0..4]. */
static gm_status time_size(allocator *a, uint64_t bytes, double *s)
{
    double alloc_us[LATENCY_REPS], free_us[LATENCY_REPS];
    for (int i = 0; i < LATENCY_REPS; i++) {
        double t0 = gm_now();
        gm_status st = take(a, bytes);
        double t1 = gm_now();
        if (st != GM_OK)
            return st;
        give(a);
        alloc_us[i] = (t1 - t0) * 1e6;
        free_us[i] = (gm_now() - t1) * 1e6;
    }
    gm_stats as, fs;
    gm_stats_compute(alloc_us, LATENCY_REPS, &as);
    gm_stats_compute(free_us, LATENCY_REPS, &fs);
    s[0] = (double)bytes;
    s[1] = as.median;
    s[2] = as.p99;
    s[3] = fs.median;
    s[4] = fs.p99;
    return GM_OK;
}

void gm_probe_latency_local(gm_device *dev, const gm_bench_opts *o, gm_pattern_kind kind, double fill,
                            gm_probe_result *r)
{
    (void)o;
    memset(r, 0, sizeof *r);
    gm_ballast ballast;
    if (!gm_ballast_init(&ballast, MAX_BALLAST)) {
        failed(dev, gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory"), r);
        return;
    }
    /* Fill the device to the share first, in chunks. */
    uint64_t target = (uint64_t)((double)free_under_cap(dev) * fill);
    gm_status st = gm_ballast_fill(dev, &ballast, target, BALLAST_CHUNK, 1);
    allocator a = {dev, kind, {0}, {0}, {0}};
    gm_cache_init(&a.cache, dev, GM_CACHE_POOL, 0);
    uint64_t room = free_under_cap(dev);
    for (int i = 0; i < GM_LATENCY_SIZES && st == GM_OK; i++) {
        if (gm_latency_sizes[i] > room / 2)
            break;                   /* keep the measurement off the OOM edge */
        st = time_size(&a, gm_latency_sizes[i], &r->stats[5 * i]);
        if (st == GM_OK) {
            r->n_stats += 5;
        } else if (st == GM_ERR_OOM) {
            /* The allocator needs more than the size (a pool's segment):
             * the sizes before it stand. */
            snprintf(r->note, sizeof r->note, "from %llu bytes on: %s", (unsigned long long)gm_latency_sizes[i],
                     dev->err.msg);
            st = GM_OK;
            break;
        }
    }
    if (st != GM_OK)
        failed(dev, st, r);
    else
        r->outcome = r->n_stats ? GM_PROBE_FITS : GM_PROBE_OOM;
    gm_cache_release(&a.cache);
    gm_ballast_release(dev, &ballast);
}
