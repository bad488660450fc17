/*
 * oom-recovery: exhausts device memory three ways (64MiB chunks, 1MiB
 * chunks, seeded mixed sizes) until the device or the cap says out of
 * memory; after each, frees everything and checks that the device still
 * runs a kernel correctly (the touch kernel over 4MiB, verified) and that
 * all memory came back (the driver's free memory where it reports it,
 * and this run's accounting).
 */
#include "bench.h"
#include "stress.h"
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>

#define MIB ((uint64_t)1 << 20)
#define MAX_HELD 8192

static const char *const ways[] = {"64MiB chunks", "1MiB chunks", "mixed sizes"};

/* Allocates until OOM (or MAX_HELD); returns the bytes held. */
static uint64_t exhaust(gm_device *dev, gm_buffer *held, int *n, int way, uint64_t *x, gm_status *rc)
{
    uint64_t total = 0;
    *n = 0;
    *rc = GM_OK;
    while (*n < MAX_HELD) {
        uint64_t size = way == 0 ? 64 * MIB : way == 1 ? MIB : (64u << 10) << (gm_xorshift(x) % 11);
        gm_status st = gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)size, &held[*n]);
        if (st == GM_ERR_OOM)
            break;
        if (st != GM_OK) {
            *rc = st;
            break;
        }
        total += size;
        (*n)++;
    }
    return total;
}

static int oom_recovery(gm_stress *s, gm_stress_result *r)
{
    gm_device *dev = s->dev;
    gm_buffer *held = calloc(MAX_HELD, sizeof *held);
    gm_touch t = {0};
    gm_status rc = held ? gm_touch_open(&t, dev) : gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    const char *source = "";
    uint64_t start_free = gm_stress_free_memory(dev, &source), start_live = dev->live_bytes;
    uint64_t x = s->seed * 0x9e3779b97f4a7c15ull + 3;
    int recovered = 0, out = 0;
    for (int way = 0; way < 3 && rc == GM_OK; way++) {
        int n = 0;
        uint64_t got = exhaust(dev, held, &n, way, &x, &rc);
        for (int i = 0; i < n; i++)
            gm_device_free(dev, &held[i]);
        if (rc != GM_OK)
            break;
        gm_stress_diag(r, way == 0 ? "exhausted_64MiB" : way == 1 ? "exhausted_1MiB" : "exhausted_mixed",
                       "%llu bytes in %d allocations", (unsigned long long)got, n);
        if (out == 0)
            out = gm_stress_row(s, "oom-recovery", "exhausted", "bytes", (double)got, got);
        gm_stress_words w;
        bool ok = false;
        rc = gm_stress_words_init(s, &w, 4 * MIB, (uint64_t)way);
        if (rc == GM_OK)
            rc = gm_stress_words_touch(s, &t, &w, 0);
        if (rc == GM_OK)
            rc = gm_stress_words_check(s, &w, &ok);
        gm_stress_words_free(s, &w);
        const char *src;
        uint64_t now_free = gm_stress_free_memory(dev, &src);
        if (rc == GM_OK && !ok)
            gm_stress_fail(r, "after exhausting memory with %s the kernel's output was wrong", ways[way]);
        else if (rc == GM_OK && (dev->live_bytes != start_live || now_free != start_free))
            gm_stress_fail(r, "after exhausting memory with %s, %llu bytes did not come back", ways[way],
                           (unsigned long long)(start_free - now_free));
        else if (rc == GM_OK)
            recovered++;
    }
    gm_stress_diag(r, "recovered", "%d of 3", recovered);
    gm_stress_diag(r, "free_memory_from", "%s", source);
    if (rc != GM_OK)
        gm_stress_fail(r, "%s", dev->err.msg);
    r->ok = rc == GM_OK && recovered == 3;
    gm_touch_close(&t);
    free(held);
    return rc == GM_ERR_DEVICE_LOST ? -1 : out;
}

const gm_stress_check gm_stress_oom_recovery = {"oom-recovery", "the device works and memory returns after OOM",
                                                oom_recovery};
