/*
 * The swap suite, offload: the block workload at the options' shape (the
 * first precision, batch and sequence length of their axes) run resident
 * (every weight on the device) and offloaded (weights in pinned host
 * memory streamed in layer by layer with double buffering, --offload),
 * every iteration verified; and the offloaded run's weight copies alone.
 * Rows: the time of each (latency distribution; bandwidth of the weights
 * streamed per iteration), `offload_penalty` (offloaded over resident
 * time) and `overlap_hidden` (the share of the copy time that compute
 * hid: (resident + copies - offloaded) / copies, clipped to [0, 1]).
 */
#include "bench/workloads/block_private.h"
#include "lib/stats.h"
#include "bench/swap/parts.h"
#include "bench/workloads/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RESIDENT, OFFLOADED, COPIES, N_RUNS };
static const char *const run_names[N_RUNS] = {"resident", "offloaded", "copy-only"};

int gm_swap_offload_count(gm_bench *b)
{
    (void)b;
    return 1;
}

static gm_shape shape_of(const gm_bench *b, bool offload)
{
    const gm_bench_opts *o = b->opts;
    gm_shape s = o->shape;
    s.prec = (gm_precision)__builtin_ctz(o->precisions ? o->precisions : 1u);
    s.batch = o->batches ? o->batches[0] : 1;
    s.seq = o->seqs ? o->seqs[0] : 512;
    s.offload = offload;
    s.naive = false;
    gm_shape_complete(&s);
    return s;
}

/* Times reps iterations (and the copies alone when asked), each verified. */
static gm_status measure(gm_bench *b, const gm_shape *s, double *ms, double *copy_ms, bool *ok, char *note,
                         size_t len)
{
    const gm_workload *r = &gm_workload_block;
    gm_tensor t[GM_MAX_TENSORS];
    int nt = gm_workload_find("block")->tensors(s, t);
    gm_pattern_env env;
    gm_pattern_env_init(&env, b->dev, b->opts);
    gm_pattern pat;
    void *state = NULL;
    gm_status rc = nt < 0 ? gm_device_fail(b->dev, GM_ERR_OOM, 0, "the shape's size overflows")
                          : gm_pattern_begin(&pat, &env, GM_PATTERN_PER_TENSOR, t, nt);
    if (rc == GM_OK)
        rc = r->setup(b->dev, &pat, s, "tiled", &state);
    unsigned reps = b->opts->reps;
    *ok = true;
    for (unsigned i = 0; rc == GM_OK && *ok && i < reps + b->opts->warmup; i++) {
        double elapsed = 0;
        rc = gm_time_on_queue(b->dev, 0, r->enqueue, state, &elapsed);
        if (rc == GM_OK && b->output_fault.kind != GM_OUTPUT_FAULT_NONE)
            rc = r->corrupt(state, &b->output_fault, i);
        if (rc == GM_OK)
            rc = r->verify(state, i, ok, note, len);
        if (rc == GM_OK && copy_ms && i >= b->opts->warmup) {
            double t0 = gm_now();
            rc = block_stream_weights(state);
            copy_ms[i - b->opts->warmup] = (gm_now() - t0) * 1e3;
        }
        if (i >= b->opts->warmup)
            ms[i - b->opts->warmup] = elapsed;
    }
    if (state)
        r->teardown(state);
    if (nt >= 0)
        gm_pattern_end(&pat);
    gm_pattern_env_release(&env);
    return rc;
}

static int emit_ratio(gm_bench *b, gm_row row, const char *metric, double value, const char *note)
{
    gm_row_single(&row, metric, "ratio", value);
    row.note = note;
    return gm_bench_emit(b, &row, NULL, 0);
}

int gm_swap_offload_run(gm_bench *b)
{
    gm_shape s = shape_of(b, true);
    gm_row row = {0};
    row.suite = "swap";
    row.workload = "offload";
    row.pattern = "pinned";
    row.precision = gm_precision_name(s.prec);
    row.batch = s.batch;
    row.seq_len = s.seq;
    row.bytes = 0;
    int rc;
    if (s.layers <= 2) {
        row.variant = "offloaded";
        rc = gm_swap_emit_status(b, row, GM_ROW_SKIPPED,
                                 "offload streams weights only past two layers (--layers 3 or more)");
        return gm_bench_point_finished(b, rc, "swap offload");
    }
    unsigned reps = b->opts->reps;     /* a throughput comparison, not a latency tail */
    double *ms[N_RUNS];
    for (int i = 0; i < N_RUNS; i++)
        ms[i] = calloc(reps, sizeof(double));
    bool ok = true;
    char note[300] = "";
    gm_status st = ms[0] && ms[1] && ms[2] ? GM_OK : gm_device_fail(b->dev, GM_ERR_OOM, 0, "out of host memory");
    gm_shape resident = shape_of(b, false);
    if (st == GM_OK)
        st = measure(b, &resident, ms[RESIDENT], NULL, &ok, note, sizeof note);
    if (st == GM_OK && ok)
        st = measure(b, &s, ms[OFFLOADED], ms[COPIES], &ok, note, sizeof note);
    /* The weights streamed per iteration: every layer, per micro-batch and pass. */
    gm_tensor t[GM_MAX_TENSORS];
    gm_shape all = resident;
    int nt = gm_workload_find("block")->tensors(&all, t);
    double weights = 0;
    for (int i = 0; i < nt && i < 4; i++)
        weights += (double)t[i].bytes;
    double passes = (double)((s.batch + s.micro_batch - 1) / s.micro_batch) * (s.checkpoint ? 2 : 1);
    row.model_bytes = (uint64_t)(weights * passes);
    if (st != GM_OK) {
        if (st == GM_ERR_DEVICE_LOST)
            b->device_lost = true;
        row.variant = "offloaded";
        rc = gm_swap_emit_status(b, row, gm_row_status_of(st), b->dev->err.msg);
    } else if (!ok) {
        row.variant = "offloaded";
        rc = gm_swap_emit_status(b, row, GM_ROW_MISMATCH, note);
    } else {
        rc = 0;
        for (int i = 0; i < N_RUNS && rc == 0; i++) {
            row.variant = run_names[i];
            rc = gm_swap_emit_latency(b, row, ms[i], reps, weights * passes, 1);
        }
        gm_stats m[N_RUNS];
        for (int i = 0; i < N_RUNS; i++)
            gm_stats_compute(ms[i], reps, &m[i]);
        double penalty = m[RESIDENT].median > 0 ? m[OFFLOADED].median / m[RESIDENT].median : 0;
        double hidden = m[COPIES].median > 0
                            ? (m[RESIDENT].median + m[COPIES].median - m[OFFLOADED].median) / m[COPIES].median
                            : 0;
        hidden = hidden < 0 ? 0 : hidden > 1 ? 1 : hidden;
        row.variant = "offloaded";
        char why[200];
        snprintf(why, sizeof why, "medians: resident %.3f ms, offloaded %.3f ms, copies alone %.3f ms",
                 m[RESIDENT].median, m[OFFLOADED].median, m[COPIES].median);
        if (rc == 0)
            rc = emit_ratio(b, row, "offload_penalty", penalty, why);
        if (rc == 0)
            rc = emit_ratio(b, row, "overlap_hidden", hidden, NULL);
    }
    for (int i = 0; i < N_RUNS; i++)
        free(ms[i]);
    return gm_bench_point_finished(b, rc, "swap offload");
}
