/*
 * The swap suite, KV-cache blocks: as serving engines preempt sequences,
 * batches of N fixed-size blocks, scattered over a device pool, are copied
 * out to pinned host swap space and back into other free blocks, with the
 * device kept `--swap-pressure` full by other allocations meanwhile. Axes:
 * block size (--kv-block-sizes) and N (--swap-batch). Each swap-out and
 * swap-in of N blocks is timed by device events (latency per swap and per
 * block, bandwidth); after every round trip each block is read back and
 * its checksum compared with what was swapped out. A point whose pool and
 * swap space would not fit is `skipped` before anything is allocated.
 */
#include "bench/swap/parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)
#define BALLAST_CHUNK (64 * MIB)
#define MAX_BALLAST 1024

static const uint64_t default_block_sizes[] = {64u << 10, 256u << 10, 1u << 20};
static const uint64_t default_batches[] = {1, 8, 32};

static void axes_of(const gm_bench *b, const uint64_t **sizes, size_t *ns, const uint64_t **batches, size_t *nb)
{
    const gm_bench_opts *o = b->opts;
    *sizes = o->kv_block_sizes ? o->kv_block_sizes : default_block_sizes;
    *ns = o->kv_block_sizes ? o->n_kv_block_sizes : sizeof default_block_sizes / sizeof default_block_sizes[0];
    *batches = o->swap_batches ? o->swap_batches : default_batches;
    *nb = o->swap_batches ? o->n_swap_batches : sizeof default_batches / sizeof default_batches[0];
}

int gm_swap_blocks_count(gm_bench *b)
{
    const uint64_t *s, *n;
    size_t ns, nb;
    axes_of(b, &s, &ns, &n, &nb);
    return (int)(ns * nb);
}

typedef struct {
    gm_device *dev;
    size_t block, n;              /* block bytes; blocks per swap */
    gm_buffer pool, swap_space, staging;
    size_t *out_ids, *in_ids;     /* device blocks swapped out, and where they come back */
    uint64_t *sums;
} swapper;

static gm_status enqueue_out(void *ctx)
{
    swapper *s = ctx;
    gm_status rc = GM_OK;
    for (size_t i = 0; i < s->n && rc == GM_OK; i++)
        rc = s->dev->backend->copy(s->dev, 0, &s->swap_space, i * s->block, &s->pool, s->out_ids[i] * s->block,
                                   s->block, true);
    return rc;
}

static gm_status enqueue_in(void *ctx)
{
    swapper *s = ctx;
    gm_status rc = GM_OK;
    for (size_t i = 0; i < s->n && rc == GM_OK; i++)
        rc = s->dev->backend->copy(s->dev, 0, &s->pool, s->in_ids[i] * s->block, &s->swap_space, i * s->block,
                                   s->block, true);
    return rc;
}

/* Fresh payloads in the blocks to swap out, and a new scatter: 2N pool
 * blocks shuffled, the first N go out, the other N take them back. */
static gm_status prepare(swapper *s, unsigned rep)
{
    uint64_t x = 0x243f6a8885a308d3ull ^ ((uint64_t)rep << 32) ^ s->n;
    size_t total = 2 * s->n, *ids = s->out_ids;
    size_t all[2 * 64];
    size_t *perm = total <= 128 ? all : malloc(total * sizeof *perm);
    if (!perm)
        return gm_device_fail(s->dev, GM_ERR_OOM, 0, "out of host memory");
    for (size_t i = 0; i < total; i++)
        perm[i] = i;
    for (size_t i = total - 1; i > 0; i--) {
        size_t j = (size_t)(gm_xorshift(&x) % (i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    memcpy(ids, perm, s->n * sizeof *ids);
    memcpy(s->in_ids, perm + s->n, s->n * sizeof *ids);
    if (perm != all)
        free(perm);
    gm_status rc = GM_OK;
    for (size_t i = 0; i < s->n && rc == GM_OK; i++) {
        gm_swap_fill(s->staging.host, s->block, ((uint64_t)rep << 20) + i);
        s->sums[i] = gm_swap_checksum(s->staging.host, s->block);
        rc = s->dev->backend->copy(s->dev, 0, &s->pool, ids[i] * s->block, &s->staging, 0, s->block, false);
    }
    return rc;
}

/* Every block back in the pool holds what was swapped out. */
static gm_status verify(swapper *s, bool fault, bool *ok, char *note, size_t len)
{
    gm_status rc = GM_OK;
    if (fault)
        rc = gm_corrupt_bytes(s->dev, &s->pool, s->in_ids[s->n - 1] * s->block + s->block / 2, 1);
    *ok = true;
    for (size_t i = 0; i < s->n && rc == GM_OK && *ok; i++) {
        rc = s->dev->backend->copy(s->dev, 0, &s->staging, 0, &s->pool, s->in_ids[i] * s->block, s->block, false);
        if (rc == GM_OK && gm_swap_checksum(s->staging.host, s->block) != s->sums[i]) {
            *ok = false;
            snprintf(note, len, "block %zu of %zu bytes came back from swap with a different checksum", i, s->block);
        }
    }
    return rc;
}

static gm_row base_row(size_t block, size_t n)
{
    gm_row row = {0};
    row.suite = "swap";
    row.workload = "kv-blocks";
    row.pattern = "pinned";
    row.bytes = block;
    row.batch = n;
    row.model_bytes = 2 * n * block;
    return row;
}

static int run_point(gm_bench *b, size_t block, size_t n)
{
    gm_device *dev = b->dev;
    char why[200];
    /* The pool of 2N blocks on the device; N blocks of swap space and a
     * staging block on the host. */
    if (!gm_swap_fits(b, 2 * (uint64_t)n * block, ((uint64_t)n + 1) * block, why, sizeof why)) {
        gm_row row = base_row(block, n);
        row.variant = "swap-out";
        return gm_swap_emit_status(b, row, GM_ROW_SKIPPED, why);
    }
    swapper s = {dev, block, n, {0}, {0}, {0}, calloc(n, sizeof(size_t)), calloc(n, sizeof(size_t)),
                 calloc(n, sizeof(uint64_t))};
    gm_ballast ballast;
    bool have_ballast = gm_ballast_init(&ballast, MAX_BALLAST);
    unsigned reps = gm_swap_reps(b);
    double *out_ms = calloc(reps, sizeof *out_ms), *in_ms = calloc(reps, sizeof *in_ms);
    gm_status rc = s.out_ids && s.in_ids && s.sums && have_ballast && out_ms && in_ms
                       ? GM_OK
                       : gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_DEVICE, 2 * n * block, &s.pool);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_PINNED, n * block, &s.swap_space);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_HOST, block, &s.staging);
    /* Memory pressure: other allocations take a share of what is left. */
    if (rc == GM_OK) {
        uint64_t free_b;
        gm_device_free_memory(dev, GM_FREE_UNKNOWN_ZERO, &free_b);
        uint64_t target = (uint64_t)((double)free_b * b->opts->swap_pressure);
        gm_ballast_fill(dev, &ballast, target, BALLAST_CHUNK, 1);   /* as much as the device gives */
    }
    bool ok = true;
    char note[200] = "";
    for (unsigned r = 0; rc == GM_OK && ok && r < reps + b->opts->warmup; r++) {
        double o_ms = 0, i_ms = 0;
        rc = prepare(&s, r);
        if (rc == GM_OK)
            rc = gm_time_on_queue(dev, 0, enqueue_out, &s, &o_ms);
        if (rc == GM_OK)
            rc = gm_time_on_queue(dev, 0, enqueue_in, &s, &i_ms);
        if (rc == GM_OK)
            rc = verify(&s, b->output_fault.kind != GM_OUTPUT_FAULT_NONE, &ok, note, sizeof note);
        if (r >= b->opts->warmup) {
            out_ms[r - b->opts->warmup] = o_ms;
            in_ms[r - b->opts->warmup] = i_ms;
        }
    }
    gm_row row = base_row(block, n);
    int out;
    if (rc != GM_OK) {
        if (rc == GM_ERR_DEVICE_LOST)
            b->device_lost = true;
        row.variant = "swap-out";
        out = gm_swap_emit_status(b, row, gm_row_status_of(rc), dev->err.msg);
    } else if (!ok) {
        row.variant = "swap-in";
        out = gm_swap_emit_status(b, row, GM_ROW_MISMATCH, note);
    } else {
        row.variant = "swap-out";
        out = gm_swap_emit_latency(b, row, out_ms, reps, (double)(n * block), (unsigned)n);
        row.variant = "swap-in";
        if (out == 0)
            out = gm_swap_emit_latency(b, row, in_ms, reps, (double)(n * block), (unsigned)n);
    }
    gm_ballast_release(dev, &ballast);
    gm_device_free(dev, &s.pool);
    gm_device_free(dev, &s.swap_space);
    gm_device_free(dev, &s.staging);
    free(s.out_ids);
    free(s.in_ids);
    free(s.sums);
    free(out_ms);
    free(in_ms);
    return out;
}

int gm_swap_blocks_run(gm_bench *b)
{
    const uint64_t *sizes, *batches;
    size_t ns, nb;
    axes_of(b, &sizes, &ns, &batches, &nb);
    int rc = 0;
    for (size_t i = 0; i < ns && rc == 0; i++)
        for (size_t j = 0; j < nb && rc == 0; j++) {
            rc = gm_bench_resuming(b) ? 0 : run_point(b, (size_t)sizes[i], (size_t)batches[j]);
            char label[96], sz[32];
            snprintf(label, sizeof label, "swap kv-blocks %s x%llu", gm_format_size(sizes[i], sz, sizeof sz),
                     (unsigned long long)batches[j]);
            rc = gm_bench_point_finished(b, rc, label);
        }
    return rc;
}
