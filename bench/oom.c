/*
 * The oom suite: where memory runs out.
 *   largest_alloc  the largest single allocation that succeeds (and is
 *                  touched), exact to 1 MiB, by bisection
 *   largest_total  the most memory obtainable in chunks, each touched:
 *                  chunks halve on failure down to 1 MiB
 *   max_batch      for each workload, precision, sequence length and
 *                  pattern: the largest batch B that is allocated, run and
 *                  verified while B + 1 is not (double until the first
 *                  failure, then bisect), with the memory model's bytes at B
 *                  and B + 1, the probes it took and the search time; and
 *                  what a halving search (start high, halve on OOM, as
 *                  training helpers do) would have answered.
 * Every probe goes through the device's cap, so --mem-limit emulates a
 * smaller card. This process runs the probes itself: a driver that aborts
 * instead of reporting OOM ends the run (rows already written stay).
 */
#include "pattern.h"
#include "runnable.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)
#define MAX_BATCH ((uint64_t)1 << 24)
#define MAX_CHUNKS 4096

static int emit_value(gm_bench *b, const char *workload, const char *metric, const char *unit, double value,
                      uint64_t bytes, const char *note)
{
    gm_row row = {0};
    row.suite = "oom";
    row.workload = workload;
    row.pattern = "per-tensor";
    row.bytes = bytes;
    row.metric = metric;
    row.unit = unit;
    row.status = GM_ROW_OK;
    row.has_value = true;
    row.value = row.min = row.max = value;
    row.reps = 1;
    row.note = note;
    return gm_bench_emit(b, &row, NULL, 0);
}

/* Can `bytes` be allocated (and touched) now? Frees it again. A failure
 * other than OOM is returned as is. */
static gm_status try_alloc(gm_device *dev, uint64_t bytes)
{
    gm_buffer buf;
    gm_status st = gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)bytes, &buf);
    if (st == GM_OK)
        gm_device_free(dev, &buf);
    return st;
}

static int largest_alloc(gm_bench *b)
{
    gm_device *dev = b->dev;
    uint64_t total = dev->mem_limit ? dev->mem_limit : dev->info.total_mem;
    uint64_t lo = 0, hi = total / MIB + 1;   /* lo MiB fits; hi MiB does not (or is past the end) */
    int probes = 0;
    double t0 = gm_now();
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        gm_status st = try_alloc(dev, mid * MIB);
        probes++;
        if (st == GM_OK)
            lo = mid;
        else if (st == GM_ERR_OOM)
            hi = mid;
        else {
            b->device_lost = st == GM_ERR_DEVICE_LOST;
            gm_row row = {.suite = "oom", .workload = "alloc", .metric = "largest_alloc", .unit = "bytes",
                          .status = GM_ROW_ERROR, .note = dev->err.msg};
            return gm_bench_emit(b, &row, NULL, 0);
        }
    }
    char note[256], a[32], m[32];
    snprintf(note, sizeof note, "%d probes in %.2f s; advertised total %s, largest allocation %s%s", probes,
             gm_now() - t0, gm_format_size(dev->info.total_mem, a, sizeof a),
             gm_format_size(dev->info.max_alloc, m, sizeof m), dev->mem_limit ? ", under the cap" : "");
    return emit_value(b, "alloc", "largest_alloc", "bytes", (double)(lo * MIB), lo * MIB, note);
}

static int largest_total(gm_bench *b)
{
    gm_device *dev = b->dev;
    gm_buffer *chunks = calloc(MAX_CHUNKS, sizeof *chunks);
    if (!chunks)
        return -1;
    uint64_t chunk = dev->info.max_alloc ? dev->info.max_alloc : 1024 * MIB, got = 0;
    chunk = chunk / MIB * MIB;
    if (chunk > 1024 * MIB)
        chunk = 1024 * MIB;
    int n = 0;
    gm_status st = GM_OK;
    double t0 = gm_now();
    while (chunk >= MIB && n < MAX_CHUNKS) {
        st = gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)chunk, &chunks[n]);
        if (st == GM_OK) {
            got += chunk;
            n++;
        } else if (st == GM_ERR_OOM) {
            chunk /= 2;
        } else {
            break;
        }
    }
    for (int i = 0; i < n; i++)
        gm_device_free(dev, &chunks[i]);
    free(chunks);
    if (st != GM_OK && st != GM_ERR_OOM) {
        b->device_lost = st == GM_ERR_DEVICE_LOST;
        gm_row row = {.suite = "oom", .workload = "alloc", .metric = "largest_total", .unit = "bytes",
                      .status = GM_ROW_ERROR, .note = dev->err.msg};
        return gm_bench_emit(b, &row, NULL, 0);
    }
    char note[200];
    snprintf(note, sizeof note, "%d chunks in %.2f s", n, gm_now() - t0);
    return emit_value(b, "alloc", "largest_total", "bytes", (double)got, got, note);
}

/* One probe: does batch `batch` allocate, run and verify? *fits is false
 * on OOM; any other failure is returned (with dev->err). */
static gm_status probe(gm_bench *b, const gm_runnable *r, gm_shape s, const char *impl, gm_pattern_kind pattern,
                       uint64_t batch, bool *fits)
{
    gm_device *dev = b->dev;
    s.batch = batch;
    gm_shape_complete(&s);
    gm_tensor t[GM_MAX_TENSORS];
    int nt = gm_workload_find(r->name)->tensors(&s, t);
    *fits = false;
    if (nt < 0)
        return GM_OK;   /* beyond 64-bit sizes: certainly does not fit */
    gm_pattern pat;
    void *state = NULL;
    gm_status st = gm_pattern_begin(&pat, dev, pattern, t, nt);
    if (st == GM_OK)
        st = r->setup(dev, &pat, &s, impl, &state);
    double ms;
    if (st == GM_OK)
        st = gm_time_on_queue(dev, 0, r->enqueue, state, &ms);
    bool correct = false;
    char note[200];
    if (st == GM_OK)
        st = r->verify(state, 0, &correct, note, sizeof note);
    if (state)
        r->teardown(state);
    gm_pattern_end(&pat);
    if (st == GM_ERR_OOM)
        return GM_OK;
    if (st == GM_OK && !correct)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "wrong output at batch %llu: %s", (unsigned long long)batch,
                              note);
    *fits = st == GM_OK;
    return st;
}

static uint64_t model_at(const gm_runnable *r, gm_shape s, uint64_t batch)
{
    gm_tensor t[GM_MAX_TENSORS];
    s.batch = batch;
    gm_shape_complete(&s);
    int n = gm_workload_find(r->name)->tensors(&s, t);
    return n < 0 ? UINT64_MAX : gm_tensors_total(t, n);
}

/* Finds the largest batch and writes its rows. */
static int max_batch(gm_bench *b, const gm_runnable *r, const gm_shape *s, const char *impl, gm_pattern_kind pattern)
{
    gm_row row = {0};
    row.suite = "oom";
    row.workload = r->name;
    row.variant = impl;
    row.pattern = gm_pattern_names[pattern];
    row.precision = gm_precision_name(s->prec);
    row.seq_len = s->seq;
    int probes = 0;
    double t0 = gm_now();
    uint64_t lo = 0, hi = 0;     /* lo fits (0: nothing does yet); hi fails (0: none failed yet) */
    gm_status st = GM_OK;
    bool fits;
    for (uint64_t batch = 1; batch <= MAX_BATCH && st == GM_OK; batch *= 2) {
        st = probe(b, r, *s, impl, pattern, batch, &fits);
        probes++;
        if (st == GM_OK && !fits) {
            hi = batch;
            break;
        }
        if (st == GM_OK)
            lo = batch;
    }
    uint64_t halving = lo;       /* halving from the first failing power of two lands here */
    while (st == GM_OK && hi && hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        st = probe(b, r, *s, impl, pattern, mid, &fits);
        probes++;
        if (st == GM_OK)
            *(fits ? &lo : &hi) = mid;
    }
    if (st != GM_OK) {
        b->device_lost = st == GM_ERR_DEVICE_LOST;
        row.metric = "max_batch";
        row.unit = "batch";
        row.status = st == GM_ERR_INVALID && strstr(b->dev->err.msg, "wrong output") ? GM_ROW_MISMATCH : GM_ROW_ERROR;
        row.note = b->dev->err.msg;
        return gm_bench_emit(b, &row, NULL, 0);
    }
    char note[300], at[32], next[32];
    uint64_t total = b->dev->mem_limit ? b->dev->mem_limit : b->dev->info.total_mem;
    row.batch = lo;
    row.model_bytes = lo ? model_at(r, *s, lo) : 0;
    snprintf(note, sizeof note, "%d probes in %.2f s; the model holds %s at batch %llu and %s at %llu%s", probes,
             gm_now() - t0, gm_format_size(row.model_bytes, at, sizeof at), (unsigned long long)lo,
             gm_format_size(model_at(r, *s, lo + 1), next, sizeof next), (unsigned long long)(lo + 1),
             hi ? "" : " (the search limit)");
    struct { const char *metric, *unit; double value; } out[] = {
        {"max_batch", "batch", (double)lo},
        {"max_batch_halving", "batch", (double)halving},
        {"probes", "count", probes},
        {"device_fraction", "ratio", total ? (double)row.model_bytes / (double)total : 0},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof out / sizeof out[0] && rc == 0; i++) {
        row.metric = out[i].metric;
        row.unit = out[i].unit;
        row.status = GM_ROW_OK;
        row.has_value = true;
        row.value = row.min = row.max = out[i].value;
        row.reps = 1;
        row.note = i == 0 ? note : NULL;
        rc = gm_bench_emit(b, &row, NULL, 0);
    }
    return rc;
}

static const uint64_t default_seqs[] = {512};

static void seqs_of(const gm_bench *b, const uint64_t **v, size_t *n)
{
    *v = b->opts->seqs ? b->opts->seqs : default_seqs;
    *n = b->opts->seqs ? b->opts->n_seqs : 1;
}

/* Calls fn for every (workload, precision, seq, implementation, pattern). */
static int each_search(gm_bench *b, int (*fn)(gm_bench *, const gm_runnable *, const gm_shape *, const char *,
                                               gm_pattern_kind))
{
    const uint64_t *seqs;
    size_t n_seqs;
    seqs_of(b, &seqs, &n_seqs);
    int count = 0;
    for (int w = 0; w < GM_RUNNABLE_WORKLOAD_COUNT; w++) {
        if (!(b->opts->workloads & (1u << w)))
            continue;
        const gm_runnable *r = gm_workload_runnables[w];
        for (int p = 0; p < GM_PREC_COUNT; p++) {
            if (!(b->opts->precisions & (1u << p)))
                continue;
            const char *impls[GM_MAX_IMPLS];
            int n_impls = r->impls(b->dev, (gm_precision)p, impls);
            for (size_t si = 0; si < n_seqs; si++)
                for (int i = 0; i < n_impls; i++)
                    for (int pat = 0; pat < GM_PATTERN_COUNT; pat++) {
                        if (!(b->opts->patterns & (1u << pat)))
                            continue;
                        count++;
                        if (!fn)
                            continue;
                        gm_shape s = b->opts->shape;
                        s.prec = (gm_precision)p;
                        s.seq = seqs[si];
                        s.batch = 1;
                        if (r->adapt)
                            r->adapt(&s, impls[i]);
                        int rc = fn(b, r, &s, impls[i], (gm_pattern_kind)pat);
                        char label[96];
                        snprintf(label, sizeof label, "oom %s %s %s s=%llu", r->name, impls[i], gm_precision_name(s.prec),
                                 (unsigned long long)s.seq);
                        if (gm_bench_point_finished(b, rc, label) != 0)
                            return -1;
                    }
        }
    }
    return count;
}

static int oom_count(gm_bench *b) { return 2 + each_search(b, NULL); }

static int oom_run(gm_bench *b)
{
    int rc = largest_alloc(b);
    gm_bench_point_done(b, "oom largest allocation");
    if (rc == 0 && !b->device_lost) {
        rc = largest_total(b);
        gm_bench_point_done(b, "oom largest total");
    }
    if (rc == 0 && !b->device_lost)
        rc = each_search(b, max_batch) < 0 ? -1 : 0;
    return gm_bench_suite_end(b, rc);
}

const gm_suite gm_suite_oom = {
    .name = "oom",
    .summary = "largest allocation, largest total, and the largest batch of each workload",
    .count_points = oom_count,
    .run = oom_run,
};
