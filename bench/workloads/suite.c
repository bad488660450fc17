/*
 * The workloads suite: every runnable workload over the Cartesian product
 * of precision x batch x sequence length (and its implementations), at the
 * model shape of the options. Each point is first checked against the
 * memory model (a point that cannot fit is `skipped`, with the reason);
 * one that fails to allocate is `oom`; a wrong output is `mismatch`.
 */
#include "bench/model/mem_plan.h"
#include "bench/model/precision_roles.h"
#include "bench/workloads/runnable.h"
#include "lib/precision.h"
#include "lib/stats.h"
#include "lib/units.h"
#include "bench/workloads/block_model.h"
#include "bench/workloads/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define runnables gm_workloads

static const uint64_t default_batches[] = {1, 4, 16};
static const uint64_t default_seqs[] = {128, 512};

typedef struct {
    const uint64_t *batches, *seqs;
    size_t n_batches, n_seqs;
} axes;

static axes axes_of(const gm_bench_opts *o)
{
    axes a = {o->batches, o->seqs, o->n_batches, o->n_seqs};
    if (!a.batches) {
        a.batches = default_batches;
        a.n_batches = sizeof default_batches / sizeof default_batches[0];
    }
    if (!a.seqs) {
        a.seqs = default_seqs;
        a.n_seqs = sizeof default_seqs / sizeof default_seqs[0];
    }
    return a;
}

int gm_workloads_check_sizes(const gm_bench_opts *o, char *err, size_t err_len)
{
    axes a = axes_of(o);
    uint64_t batch = 0, seq = 0;
    for (size_t i = 0; i < a.n_batches; i++)
        batch = a.batches[i] > batch ? a.batches[i] : batch;
    for (size_t i = 0; i < a.n_seqs; i++)
        seq = a.seqs[i] > seq ? a.seqs[i] : seq;
    /* every workload in every mode it runs (the plan's order) */
    for (int wm = 0; wm < GM_RUNNABLE_WORKLOAD_COUNT * GM_PLAN_MODE_COUNT; wm++) {
        int w = wm / GM_PLAN_MODE_COUNT, m = wm % GM_PLAN_MODE_COUNT;
        if (!(o->workloads & (1u << w)) || !(o->modes & (1u << m)) || !gm_workload_in_mode(runnables[w], m))
            continue;
        for (int p = 0; p < GM_PREC_COUNT; p++) {
            if (!(o->precisions & (1u << p)))
                continue;
            gm_shape s = o->shape;
            gm_shape_set_roles(&s, &o->shape, (gm_precision)p);
            s.train = m == GM_PLAN_TRAIN;
            s.tune = m == GM_PLAN_LORA || m == GM_PLAN_QLORA ? (unsigned)m : 0;
            s.serve = m == GM_PLAN_SERVE;
            s.batch = batch;
            s.seq = seq;
            gm_shape_complete(&s);
            gm_tensor t[GM_MAX_TENSORS];
            int nt = runnables[w]->tensors(&s, t);
            if (nt < 0 || gm_tensors_total(t, nt) == UINT64_MAX) {
                snprintf(err, err_len, "workload %s at batch %llu, seq %llu, hidden %llu (%s) needs more than "
                         "2^64 bytes: refused", runnables[w]->name, (unsigned long long)batch,
                         (unsigned long long)seq, (unsigned long long)s.hidden, gm_precision_name(s.prec));
                return -1;
            }
        }
    }
    return 0;
}

static int workloads_count(gm_bench *b)
{
    axes a = axes_of(b->opts);
    int total = 0;
    for (int w = 0; w < GM_RUNNABLE_WORKLOAD_COUNT; w++) {
        if (!(b->opts->workloads & (1u << w)))
            continue;
        int modes = 0;
        for (int m = 0; m < GM_PLAN_MODE_COUNT; m++)
            modes += (b->opts->modes & (1u << m)) && gm_workload_in_mode(runnables[w], m);
        for (int p = 0; p < GM_PREC_COUNT; p++) {
            const char *impls[GM_MAX_IMPLS];
            gm_shape s = b->opts->shape;
            gm_shape_set_roles(&s, &b->opts->shape, (gm_precision)p);
            if (b->opts->precisions & (1u << p))
                total += modes * runnables[w]->impls(b->dev, &s, impls) * (int)(a.n_batches * a.n_seqs)
                         * __builtin_popcount(b->opts->patterns);
        }
    }
    return total;
}

typedef struct {
    gm_bench *b;
    gm_pattern_env *env;
    const gm_workload *r;
    gm_shape *s;                  /* with --on-oom shrink, the batch may drop */
    const char *impl;
    gm_pattern_kind pattern;
    uint64_t model_bytes, measured_bytes;
    uint64_t asked_batch;         /* the batch the sweep asked for */
    char degraded[160];           /* set when the batch was shrunk */
    char note[800];               /* the rows' note (describe's, degraded, the train note) */
} point;

static gm_row base_row(const point *pt)
{
    gm_row row = {0};
    row.suite = "workloads";
    row.workload = pt->r->name;
    row.variant = pt->impl;
    row.pattern = gm_pattern_names[pt->pattern];
    gm_row_shape_fields(&row, pt->s);
    row.batch = pt->s->batch;
    row.seq_len = pt->s->seq;
    row.model_bytes = pt->model_bytes;
    row.measured_bytes = pt->measured_bytes;
    row.note = pt->note[0]                         ? pt->note
               : pt->degraded[0]                   ? pt->degraded
               : gm_train_synthetic(pt->r, pt->s) ? GM_TRAIN_NOTE
                                                   : NULL;
    return row;
}

static int emit_status(const point *pt, gm_row_status status, const char *note)
{
    gm_row row = base_row(pt);
    row.metric = "time";
    row.unit = "ms";
    row.status = status;
    char both[400];
    if (gm_train_synthetic(pt->r, pt->s) && note) {
        snprintf(both, sizeof both, "%s; %s", note, GM_TRAIN_NOTE);
        note = both;
    }
    row.note = note;
    return gm_bench_emit(pt->b, &row, NULL, 0);
}

/* The point's rows' note: what describe says ran, then the degraded
 * batch or the train note. */
static void compose_note(point *pt, void *state)
{
    char described[600] = "";
    if (pt->r->describe)
        pt->r->describe(state, described, sizeof described);
    const char *tail = pt->degraded[0] ? pt->degraded : gm_train_synthetic(pt->r, pt->s) ? GM_TRAIN_NOTE : "";
    if (described[0])
        snprintf(pt->note, sizeof pt->note, "%s%s%s", described, tail[0] ? "; " : "", tail);
}

/* One metric's row of a point from its per-repetition values (the
 * median, the spread), with `note` where not NULL (else the point's). */
static int emit_series(const point *pt, const char *metric, const char *unit, const double *v, size_t reps,
                       const char *note)
{
    gm_stats st;
    gm_stats_compute(v, reps, &st);
    gm_row row = base_row(pt);
    row.metric = metric;
    row.unit = unit;
    row.has_value = true;
    row.value = st.median;
    row.min = st.min;
    row.max = st.max;
    row.stdev = st.stdev;
    row.reps = reps;
    if (note)
        row.note = note;
    return gm_bench_emit(pt->b, &row, v, reps);
}

/* The mfu row (model FLOPs utilization, in %) of an ok point whose
 * workload gives its parts. */
static int emit_mfu(const point *pt, void *state, const double *ms, size_t reps)
{
    double model_flops, peak;
    char basis[400] = "";
    if (!pt->r->utilization || !pt->r->utilization(state, &model_flops, &peak, basis, sizeof basis) || peak <= 0)
        return 0;
    double *v = malloc(reps * sizeof *v);
    if (!v)
        return emit_status(pt, GM_ROW_ERROR, "out of host memory");
    for (size_t i = 0; i < reps; i++)
        v[i] = ms[i] > 0 ? model_flops / (ms[i] / 1e3) / peak * 100.0 : 0;
    int rc = emit_series(pt, "mfu", "%", v, reps, basis);
    free(v);
    return rc;
}

/* Writes the throughput rows of an ok point from its per-repetition times. */
static int emit_measurements(const point *pt, const double *ms, size_t reps)
{
    double flops, bytes, tokens;
    pt->r->work(pt->s, &flops, &bytes, &tokens);
    static const struct { const char *metric, *unit; int kind; } metrics[] = {
        {"time", "ms", 0}, {"throughput", "GFLOP/s", 1}, {"bandwidth", "GB/s", 2}, {"tokens", "tokens/s", 3},
    };
    double *v = malloc(reps * sizeof *v);
    if (!v)
        return emit_status(pt, GM_ROW_ERROR, "out of host memory");
    int rc = 0;
    for (size_t m = 0; m < sizeof metrics / sizeof metrics[0] && rc == 0; m++) {
        for (size_t i = 0; i < reps; i++) {
            double sec = ms[i] / 1e3;
            v[i] = metrics[m].kind == 0 ? ms[i]
                   : sec <= 0           ? 0
                   : metrics[m].kind == 1 ? flops / sec / 1e9
                   : metrics[m].kind == 2 ? bytes / sec / 1e9
                                          : tokens / sec;
        }
        rc = emit_series(pt, metrics[m].metric, metrics[m].unit, v, reps, NULL);
    }
    free(v);
    return rc;
}

/* The rows of a step with host parts (--zero-offload): its transfers,
 * its host AdamW and the rest, the device's compute, per repetition (ms;
 * compute is the step's time less the other two, which are blocking), and
 * the bytes it holds in host memory. The arrays are overwritten. */
static int emit_host_parts(const point *pt, const double *ms, double *xfer, double *host, uint64_t host_bytes,
                           size_t reps)
{
    int rc = emit_series(pt, "offload_transfer_time", "ms", xfer, reps,
                         "the step's blocking copies between device and host, each after the work before it: each "
                         "module's gradients device to host as the backward ends it, the updated weights host to "
                         "device (wall time; not overlapped with compute)");
    if (rc == 0)
        rc = emit_series(pt, "host_adamw_time", "ms", host, reps,
                         "AdamW over every trainable parameter on the host's CPU (one thread), from the gradients in "
                         "host memory, the weights rounded to the compute precision for the device (wall time)");
    for (size_t i = 0; i < reps; i++)
        xfer[i] = ms[i] - xfer[i] - host[i];
    if (rc == 0)
        rc = emit_series(pt, "device_compute_time", "ms", xfer, reps,
                         "the step's time less its transfers and host AdamW: the device's forward, loss and backward, "
                         "and the waits for them");
    gm_row row = base_row(pt);
    gm_row_single(&row, "host_bytes", "bytes", (double)host_bytes);
    row.note = "pinned host memory the step holds (gpumem plan's host_total): fp32 master weights, AdamW moments and "
               "the gradients in the compute precision";
    return rc == 0 ? gm_bench_emit(pt->b, &row, NULL, 0) : rc;
}

/* Bytes of the model at the point's shape (0 if it overflows), and what
 * its pattern asks of the device (the arena rounds each tensor up). */
static int model_of(point *pt, gm_tensor *t, uint64_t *needed)
{
    int nt = pt->r->tensors(pt->s, t);
    if (nt < 0)
        return -1;
    pt->model_bytes = gm_tensors_total(t, nt);
    *needed = pt->pattern == GM_PATTERN_MONOLITHIC ? gm_arena_bytes(t, nt) : pt->model_bytes;
    return nt;
}

/* Allocates and sets the point up; on GM_ERR_OOM with --on-oom shrink,
 * halves the batch and tries again, noting the degradation. */
static gm_status set_up(point *pt, gm_pattern *pat, void **state, char *note, size_t len)
{
    gm_device *dev = pt->b->dev;
    for (;;) {
        gm_tensor t[GM_MAX_TENSORS];
        uint64_t needed;
        int nt = model_of(pt, t, &needed);
        uint64_t before = 0, after = 0, tot;
        bool known = dev->backend->mem_info(dev, &before, &tot) == GM_OK;
        gm_status st = nt < 0 ? gm_device_fail(dev, GM_ERR_OOM, 0, "the shape's size overflows 64 bits")
                              : gm_pattern_begin(pat, pt->env, pt->pattern, t, nt);
        if (st == GM_OK)
            st = pt->r->setup(dev, pat, pt->s, pt->impl, state);
        if (st == GM_OK) {
            known = known && dev->backend->mem_info(dev, &after, &tot) == GM_OK;
            pt->measured_bytes = known && before > after ? before - after : 0;
            /* The model is the contract: the workload asks for exactly its tensors. */
            if (pat->requested == pt->model_bytes)
                return GM_OK;
            snprintf(note, len, "allocated %llu bytes where the memory model says %llu",
                     (unsigned long long)pat->requested, (unsigned long long)pt->model_bytes);
            pt->r->teardown(*state);
            *state = NULL;
            gm_pattern_end(pat);
            return GM_ERR_INVALID;
        }
        if (nt >= 0)
            gm_pattern_end(pat);
        snprintf(note, len, "%s", dev->err.msg);
        if (st != GM_ERR_OOM || !pt->b->opts->on_oom_shrink || pt->s->batch == 1)
            return st;
        pt->s->batch /= 2;
        gm_shape_complete(pt->s);
        snprintf(pt->degraded, sizeof pt->degraded, "degraded: out of memory at batch %llu, ran at batch %llu",
                 (unsigned long long)pt->asked_batch, (unsigned long long)pt->s->batch);
    }
}

/* The degraded-batch row of --on-oom shrink: the batch that ran, at the
 * batch asked for. */
static int emit_degraded(const point *pt)
{
    gm_row row = base_row(pt);
    row.batch = pt->asked_batch;
    gm_row_single(&row, "degraded_batch", "batch", (double)pt->s->batch);
    return gm_bench_emit(pt->b, &row, NULL, 0);
}

/* Runs one point: model check, setup, warm-up, timed and verified reps. */
static int run_point(point *pt)
{
    gm_bench *b = pt->b;
    gm_device *dev = b->dev;
    gm_tensor t[GM_MAX_TENSORS];
    char note[300];
    uint64_t needed;
    if (model_of(pt, t, &needed) < 0)
        return emit_status(pt, GM_ROW_SKIPPED, "the shape's size overflows 64 bits");
    if (pt->s->tune && !model_lora_runs(pt->s)) {
        /* LoRA and QLoRA where the device does not run their step
         * (model_lora_runs): the row carries plan's bytes; nothing is
         * allocated for a step the device does not run. */
        snprintf(note, sizeof note, "--mode%s: the fine-tuning step is not run on the device (gpumem plan "
                 "counts its memory)", gm_mode_label(pt->s));
        return emit_status(pt, GM_ROW_UNSUPPORTED, note);
    }
    if ((pt->s->train || pt->s->tune) && gm_shape_has_arch(pt->s) && model_offload_unsupported(pt->s)) {
        /* nothing allocated; the row carries plan's device bytes */
        snprintf(note, sizeof note, "%s: %s", pt->s->arch.name, model_offload_unsupported(pt->s));
        return emit_status(pt, GM_ROW_UNSUPPORTED, note);
    }
    uint64_t free_b;
    gm_device_free_memory(dev, GM_FREE_UNKNOWN_TOTAL, &free_b);
    free_b += gm_pattern_env_cached(pt->env);
    /* With --on-oom shrink the point is tried as a training loop would;
     * managed memory past free memory is tried only when allowed. */
    bool managed = pt->pattern == GM_PATTERN_MANAGED;
    if ((needed > free_b || needed == 0) && !b->opts->on_oom_shrink && !(managed && b->opts->allow_oversubscribe)) {
        char need[32], have[32];
        snprintf(note, sizeof note, "%sthe model needs %s, the device has %s free%s",
                 managed ? "managed memory past free memory needs --allow-oversubscribe: " : "",
                 gm_format_size(needed, need, sizeof need), gm_format_size(free_b, have, sizeof have),
                 dev->mem_limit ? " under the cap" : "");
        return emit_status(pt, GM_ROW_SKIPPED, note);
    }
    void *state = NULL;
    gm_pattern pat;
    gm_status st = set_up(pt, &pat, &state, note, sizeof note);
    if (st != GM_OK) {
        if (st == GM_ERR_DEVICE_LOST)
            b->device_lost = true;
        return emit_status(pt, st == GM_ERR_INVALID ? GM_ROW_ERROR : gm_row_status_of(st), note);
    }
    const gm_bench_opts *o = b->opts;
    double *ms = calloc(o->reps, sizeof *ms), *check_ms = calloc(o->reps, sizeof *check_ms);
    /* A step with host parts (--zero-offload) is timed unheld: its time
     * spans its blocking transfers and host work (gm_workload.host_parts). */
    double *xfer_ms = calloc(o->reps, sizeof *xfer_ms), *host_ms = calloc(o->reps, sizeof *host_ms);
    uint64_t host_bytes = 0;
    bool host = pt->r->host_parts && xfer_ms && host_ms && pt->r->host_parts(state, xfer_ms, host_ms, &host_bytes);
    bool correct = true;
    /* Warm-up unheld: a first launch may load code, which must not wait
     * behind a held queue (bench.h). */
    for (unsigned w = 0; st == GM_OK && w < o->warmup && ms; w++)
        st = gm_time_on_queue(dev, 0, pt->r->enqueue, state, &ms[0]);
    for (unsigned r = 0; st == GM_OK && ms && check_ms && r < o->reps && correct; r++) {
        st = host ? gm_time_on_queue(dev, 0, pt->r->enqueue, state, &ms[r])
                  : gm_time_work(dev, 0, pt->r->enqueue, state, &ms[r]);
        if (st == GM_OK && host)
            pt->r->host_parts(state, &xfer_ms[r], &host_ms[r], &host_bytes);
        if (st == GM_OK && b->output_fault.kind != GM_OUTPUT_FAULT_NONE)
            st = pt->r->corrupt(state, &b->output_fault, r);
        /* The check, outside the timed region: its own wall time. */
        double t0 = gm_now();
        if (st == GM_OK)
            st = pt->r->verify(state, r, &correct, note, sizeof note);
        check_ms[r] = (gm_now() - t0) * 1e3;
    }
    int rc = pt->degraded[0] ? emit_degraded(pt) : 0;
    if (rc != 0)
        ;
    else if (!ms || !check_ms)
        rc = emit_status(pt, GM_ROW_ERROR, "out of host memory");
    else if (st != GM_OK) {
        if (st == GM_ERR_DEVICE_LOST)
            b->device_lost = true;
        rc = emit_status(pt, gm_row_status_of(st), dev->err.msg);
    } else if (!correct)
        rc = emit_status(pt, GM_ROW_MISMATCH, note);
    else {
        compose_note(pt, state);
        rc = emit_measurements(pt, ms, o->reps);
        if (rc == 0)
            rc = emit_mfu(pt, state, ms, o->reps);
        if (rc == 0 && host)
            rc = emit_host_parts(pt, ms, xfer_ms, host_ms, host_bytes, o->reps);
        if (rc == 0)
            rc = emit_series(pt, "verify_time", "ms", check_ms, o->reps,
                             "the output's check after each repetition (read back and compared; untimed)");
    }
    free(ms);
    free(check_ms);
    free(xfer_ms);
    free(host_ms);
    pt->r->teardown(state);
    gm_pattern_end(&pat);
    return rc;
}

static int workloads_run(gm_bench *b)
{
    axes a = axes_of(b->opts);
    int rc = 0;
    gm_pattern_env env;      /* caching allocators keep blocks from point to point */
    gm_pattern_env_init(&env, b->dev, b->opts);
    for (int wm = 0; wm < GM_RUNNABLE_WORKLOAD_COUNT * GM_PLAN_MODE_COUNT && rc == 0; wm++) {
        int w = wm / GM_PLAN_MODE_COUNT, m = wm % GM_PLAN_MODE_COUNT;
        const gm_workload *r = runnables[w];
        if (!(b->opts->workloads & (1u << w)) || !(b->opts->modes & (1u << m)) || !gm_workload_in_mode(r, m))
            continue;
        for (int p = 0; p < GM_PREC_COUNT && rc == 0; p++) {
            if (!(b->opts->precisions & (1u << p)))
                continue;
            const char *impls[GM_MAX_IMPLS];
            gm_shape ps = b->opts->shape;
            gm_shape_set_roles(&ps, &b->opts->shape, (gm_precision)p);
            int n_impls = r->impls(b->dev, &ps, impls);
            for (size_t bi = 0; bi < a.n_batches && rc == 0; bi++)
                for (size_t si = 0; si < a.n_seqs && rc == 0; si++)
                    for (int i = 0; i < n_impls * GM_PATTERN_COUNT && rc == 0; i++) {
                        gm_pattern_kind pattern = (gm_pattern_kind)(i % GM_PATTERN_COUNT);
                        const char *impl = impls[i / GM_PATTERN_COUNT];
                        if (!(b->opts->patterns & (1u << pattern)))
                            continue;
                        gm_shape s = b->opts->shape;
                        gm_shape_set_roles(&s, &b->opts->shape, (gm_precision)p);
                        s.train = m == GM_PLAN_TRAIN;
                        s.tune = m == GM_PLAN_LORA || m == GM_PLAN_QLORA ? (unsigned)m : 0;
                        s.serve = m == GM_PLAN_SERVE;
                        s.batch = a.batches[bi];
                        s.seq = a.seqs[si];
                        if (r->adapt)
                            r->adapt(&s, impl);
                        gm_shape_complete(&s);
                        point pt = {b, &env, r, &s, impl, pattern, 0, 0, s.batch, "", ""};
                        rc = gm_bench_resuming(b) ? 0 : run_point(&pt);
                        char label[96];
                        snprintf(label, sizeof label, "%s %s %s%s b=%llu s=%llu", r->name, impl,
                                 gm_precision_name(s.prec), gm_mode_label(&s), (unsigned long long)s.batch,
                                 (unsigned long long)s.seq);
                        rc = gm_bench_point_finished(b, rc, label);
                    }
        }
    }
    gm_pattern_env_release(&env);
    return gm_bench_suite_end(b, rc);
}

const gm_suite gm_suite_workloads = {
    .name = "workloads",
    .summary = "ML workloads over batch x sequence length x precision",
    .count_points = workloads_count,
    .run = workloads_run,
};
