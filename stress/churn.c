/*
 * churn: for --duration, random allocations (sizes log-uniform from 4KiB
 * to 16MiB, within what the cap leaves) and frees in random order. Every
 * live block holds a seeded payload, read back and checked against its
 * checksum before it is freed. At the end every block is freed and the
 * device's memory must be back where it started: this run's accounting
 * exactly, and the driver's free memory where it reports it for the
 * device (gm_stress_mem). Fault drop-free leaves one block unfreed until
 * after the verdict.
 */
#include "bench/bench.h"
#include "lib/interrupt.h"
#include "stress/stress.h"
#include "bench/swap/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_LIVE 256
#define MIN_SIZE 4096.0
#define MAX_SIZE (16.0 * 1048576.0)

typedef struct {
    gm_buffer buf;
    uint64_t sum, seed;
} block;

typedef struct {
    gm_stress *s;
    block live[MAX_LIVE];
    int n;
    gm_buffer staging;            /* MAX_SIZE of host memory */
    uint64_t allocs, frees, bytes_checked, corrupt;
    gm_buffer dropped;            /* drop-free: the block not freed */
} churner;

static gm_status put(churner *c, uint64_t size, uint64_t seed)
{
    gm_device *dev = c->s->dev;
    block *b = &c->live[c->n];
    gm_status rc = gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)size, &b->buf);
    if (rc != GM_OK)
        return rc;
    gm_swap_fill(c->staging.host, (size_t)size, seed);
    b->sum = gm_swap_checksum(c->staging.host, (size_t)size);
    b->seed = seed;
    c->n++;
    c->allocs++;
    return dev->backend->copy(dev, 0, &b->buf, 0, &c->staging, 0, (size_t)size, false);
}

/* Checks block i's payload, then frees it (or, once, drops it). */
static gm_status take(churner *c, int i)
{
    gm_device *dev = c->s->dev;
    block *b = &c->live[i];
    gm_status rc = dev->backend->copy(dev, 0, &c->staging, 0, &b->buf, 0, b->buf.bytes, false);
    if (rc == GM_OK && gm_swap_checksum(c->staging.host, b->buf.bytes) != b->sum)
        c->corrupt++;
    c->bytes_checked += b->buf.bytes;
    if (c->s->fault == GM_STRESS_FAULT_DROP_FREE && !c->dropped.bytes)
        c->dropped = b->buf;     /* freed only after the verdict */
    else
        gm_device_free(dev, &b->buf);
    c->frees++;
    c->live[i] = c->live[--c->n];
    return rc;
}

static int churn(gm_stress *s, gm_stress_result *r)
{
    gm_device *dev = s->dev;
    churner c = {.s = s};
    gm_stress_mem before, after;
    gm_stress_mem_now(dev, &before);
    gm_status rc = gm_device_alloc(dev, GM_MEM_HOST, (size_t)MAX_SIZE, &c.staging);
    uint64_t x = s->seed * 0x2545f4914f6cdd1dull + 7, ooms = 0;
    double end = gm_now() + s->duration;
    while (rc == GM_OK && gm_now() < end && !gm_interrupted()) {
        bool grow = c.n == 0 || (c.n < MAX_LIVE && gm_xorshift(&x) % 100 < 55);
        if (grow) {
            double u = (double)(gm_xorshift(&x) >> 11) * 0x1p-53;
            uint64_t size = (uint64_t)(MIN_SIZE * exp(u * log(MAX_SIZE / MIN_SIZE))) / 4096 * 4096;
            rc = put(&c, size, gm_xorshift(&x));
            if (rc == GM_ERR_OOM) {          /* full: that is churn too; free instead */
                ooms++;
                rc = c.n ? take(&c, (int)(gm_xorshift(&x) % (uint64_t)c.n)) : GM_OK;
            }
        } else {
            rc = take(&c, (int)(gm_xorshift(&x) % (uint64_t)c.n));
        }
    }
    while (rc == GM_OK && c.n)
        rc = take(&c, c.n - 1);
    while (c.n)                              /* after a failure: released unchecked */
        gm_device_free(dev, &c.live[--c.n].buf);
    gm_stress_mem_now(dev, &after);
    uint64_t leaked = gm_stress_mem_missing(&before, &after);
    r->ok = rc == GM_OK && c.corrupt == 0 && leaked == 0;
    gm_stress_diag(r, "allocations", "%llu", (unsigned long long)c.allocs);
    gm_stress_diag(r, "frees", "%llu", (unsigned long long)c.frees);
    gm_stress_diag(r, "out_of_memory", "%llu", (unsigned long long)ooms);
    gm_stress_diag(r, "bytes_checked", "%llu", (unsigned long long)c.bytes_checked);
    gm_stress_diag(r, "corrupt_blocks", "%llu", (unsigned long long)c.corrupt);
    gm_stress_mem_diag(r, &before, &after);
    gm_stress_diag(r, "leaked_bytes", "%llu", (unsigned long long)leaked);
    if (rc != GM_OK)
        gm_stress_fail(r, "%s", dev->err.msg);
    else if (c.corrupt)
        gm_stress_fail(r, "%llu blocks failed their checksum", (unsigned long long)c.corrupt);
    else if (leaked)
        gm_stress_fail(r, "free memory did not come back: %llu bytes short", (unsigned long long)leaked);
    int out = gm_stress_row(s, "churn", "allocations", "count", (double)c.allocs, 0);
    if (out == 0)
        out = gm_stress_row(s, "churn", "leaked", "bytes", (double)leaked, 0);
    gm_device_free(dev, &c.dropped);
    gm_device_free(dev, &c.staging);
    return rc == GM_ERR_DEVICE_LOST ? -1 : out;
}

const gm_stress_check gm_stress_churn = {"churn", "random allocation and free with checksummed payloads", churn};
