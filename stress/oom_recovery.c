/*
 * oom-recovery: exhausts device memory three ways (64MiB chunks, 1MiB
 * chunks, seeded mixed sizes from 64KiB to 64MiB) until the device or the
 * run's cap says out of memory; after each, frees everything and checks
 * that all memory came back (gm_stress_mem: the run's accounting, and the
 * driver's free memory where it reports it) and then that the device
 * still runs a kernel correctly (the touch kernel over 4MiB, verified). The
 * diagnostics say, per way, whether the cap or the driver ran out. Fault
 * drop-free keeps one allocation of the first way until after its check.
 */
#include "bench/bench.h"
#include "stress/stress.h"
#include "stress/verify.h"

#include <stdio.h>
#include <stdlib.h>

#define MIB ((uint64_t)1 << 20)
#define MAX_HELD (1 << 18)           /* 256GiB in 1MiB chunks */

static const char *const ways[] = {"64MiB chunks", "1MiB chunks", "mixed sizes"};
static const char *const keys[] = {"exhausted_64MiB", "exhausted_1MiB", "exhausted_mixed"};

/* Allocates until OOM (or MAX_HELD allocations); returns the bytes held.
 * *by says who refused: "cap", "driver", or "" (MAX_HELD reached). A
 * failure other than OOM is left in *rc. */
static uint64_t exhaust(gm_device *dev, gm_buffer *held, int *n, int way, uint64_t *x, const char **by,
                        gm_status *rc)
{
    uint64_t total = 0;
    *n = 0;
    *rc = GM_OK;
    *by = "";
    while (*n < MAX_HELD) {
        uint64_t size = way == 0 ? 64 * MIB : way == 1 ? MIB : (64u << 10) << (gm_xorshift(x) % 11);
        bool past_cap = dev->mem_limit && (dev->live_bytes > dev->mem_limit || size > dev->mem_limit - dev->live_bytes);
        gm_status st = gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)size, &held[*n]);
        if (st == GM_ERR_OOM) {
            *by = past_cap ? "cap" : "driver";
            break;
        }
        if (st != GM_OK) {
            *rc = st;
            break;
        }
        total += size;
        (*n)++;
    }
    return total;
}

/* The touch kernel over 4MiB, verified: *ok. */
static gm_status kernel_works(gm_stress *s, gm_touch *t, uint64_t seed, bool *ok)
{
    gm_stress_words w;
    *ok = false;
    gm_status rc = gm_stress_words_init(s, &w, 4 * MIB, seed);
    if (rc == GM_OK)
        rc = gm_stress_words_touch(s, t, &w, 0);
    if (rc == GM_OK)
        rc = gm_stress_words_check(s, &w, ok);
    gm_stress_words_free(s, &w);
    return rc;
}

static int oom_recovery(gm_stress *s, gm_stress_result *r)
{
    gm_device *dev = s->dev;
    gm_buffer *held = calloc(MAX_HELD, sizeof *held), dropped = {0};
    gm_touch t = {0};
    gm_status rc = held ? gm_touch_open(&t, dev) : gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    bool ok = false;
    /* One run first, so that what loading the kernel costs the driver is
     * taken before the starting figures. */
    if (rc == GM_OK)
        rc = kernel_works(s, &t, 99, &ok);
    if (rc == GM_OK && !ok)
        gm_stress_fail(r, "the kernel's output was wrong before memory was exhausted");
    gm_stress_mem before, now = {0};
    gm_stress_mem_now(dev, &before);
    uint64_t x = s->seed * 0x9e3779b97f4a7c15ull + 3;
    int recovered = 0, out = 0;
    for (int way = 0; way < 3 && rc == GM_OK; way++) {
        int n = 0;
        const char *by;
        uint64_t got = exhaust(dev, held, &n, way, &x, &by, &rc);
        for (int i = 0; i < n; i++)
            if (s->fault == GM_STRESS_FAULT_DROP_FREE && way == 0 && i == 0)
                dropped = held[i];
            else
                gm_device_free(dev, &held[i]);
        if (rc != GM_OK)
            break;
        gm_stress_diag(r, keys[way], "%llu bytes in %d allocations, refused by the %s", (unsigned long long)got, n,
                       *by ? by : "allocation count limit");
        if (out == 0)
            out = gm_stress_row(s, "oom-recovery", "exhausted", "bytes", (double)got, got);
        /* Memory first: a kernel cannot be judged on memory still held. */
        gm_stress_mem_now(dev, &now);
        uint64_t missing = gm_stress_mem_missing(&before, &now);
        if (missing)
            gm_stress_fail(r, "after exhausting memory with %s, %llu bytes did not come back", ways[way],
                           (unsigned long long)missing);
        else if ((rc = kernel_works(s, &t, (uint64_t)way, &ok)) == GM_OK && !ok)
            gm_stress_fail(r, "after exhausting memory with %s the kernel's output was wrong", ways[way]);
        else if (rc == GM_OK && !*by)
            gm_stress_fail(r, "%s: %d allocations did not exhaust memory", ways[way], MAX_HELD);
        else if (rc == GM_OK)
            recovered++;
        gm_device_free(dev, &dropped);
    }
    gm_stress_diag(r, "recovered", "%d of 3", recovered);
    gm_stress_mem_diag(r, &before, &now);
    if (rc != GM_OK)
        gm_stress_fail(r, "%s", dev->err.msg);
    r->ok = r->ok && rc == GM_OK && recovered == 3;
    gm_touch_close(&t);
    free(held);
    return rc == GM_ERR_DEVICE_LOST ? -1 : out;
}

const gm_stress_check gm_stress_oom_recovery = {"oom-recovery", "the device works and memory returns after OOM",
                                                oom_recovery};
