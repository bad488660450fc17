/*
 * The serve suite: a serving engine (bench/workloads/serve_engine.h) on the
 * device, a whole model (--model) at each precision and request length
 * (--seq: prompt and --output-tokens decoded), as vLLM's V1 engine serves
 * it:
 *  1. the budget: gpu_memory_utilization of the device's memory (its cap
 *     where one is set), less what the engine holds besides the KV cache,
 *     measured as vLLM measures it: the device's used memory after the
 *     engine's weights, activations and workspace are allocated and a
 *     profile step has run (bench/model/serve_plan.h cites vLLM's source);
 *     the rest in blocks, beside plan --mode serve's modelled figure;
 *  2. requests admitted, prefilled in chunks of max_batched_tokens rows and
 *     decoded, the running sequences growing 1, 2, 4, ... up to what the
 *     pool holds: prefill tokens/s, and at each count decode steps timed
 *     with the bytes a step must read (the weights, the embedding rows and
 *     every running sequence's keys and values) over the rate of a read of
 *     as many bytes of the KV pool timed after each step (pool_read.h), or
 *     where that read cannot be built the device-memory bandwidth the
 *     stream suite measured in the same run (its best read from arrays of
 *     at least 4x the last-level cache): the step time the memory allows,
 *     and the measured time as a share of it;
 *  3. at the full pool, decoding on until sequences need blocks that are
 *     not free: preemption by swap (blocks to pinned host memory and back)
 *     and by recompute (dropped, prefill run again), each timed per block
 *     and per token.
 * The first prefill step, the first decode step at each count, the decode
 * step after a swap-in and a recompute's first prefill step are checked against
 * the CPU reference (serve_step_verify), and a swapped sequence's blocks
 * against their host copy; one wrong result makes the point a mismatch
 * row and no figure of it is written.
 */
#include "bench/bench.h"
#include "bench/model/mem_plan.h"
#include "bench/model/precision_roles.h"
#include "bench/model/serve_plan.h"
#include "bench/pattern/pattern.h"
#include "bench/serve/pool_read.h"
#include "bench/serve/sched.h"
#include "lib/stats.h"
#include "lib/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DECODE_STEPS 8            /* timed decode steps at each running count of the ramp */
/* At the full pool, the count the report quotes: on a shared host a step
 * and the read beside it meet other loads from one step to the next, and
 * the median of 8 steps' shares moved by 0.07 and 0.13 between two runs of
 * make bench (docs/serve.md). */
#define FULL_POOL_STEPS 24
#define MAX_LEVELS 24
#define DEFAULT_SEQ 1024

static uint64_t cdiv(uint64_t x, uint64_t y) { return x / y + (x % y != 0); }

static void seqs_of(const gm_bench *b, const uint64_t **v, size_t *n)
{
    static const uint64_t dflt[] = {DEFAULT_SEQ};
    *v = b->opts->seqs ? b->opts->seqs : dflt;
    *n = b->opts->seqs ? b->opts->n_seqs : 1;
}

static int serve_count(gm_bench *b)
{
    const uint64_t *seqs;
    size_t n;
    seqs_of(b, &seqs, &n);
    return __builtin_popcount(b->opts->precisions) * (int)n;
}

/* Samples of one row. */
typedef struct {
    double *v;
    size_t n, cap;
} samples;

static bool push(samples *s, double v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        double *p = realloc(s->v, cap * sizeof *p);
        if (!p)
            return false;
        s->v = p;
        s->cap = cap;
    }
    s->v[s->n++] = v;
    return true;
}

/* The decode steps timed at one running count, and the reads of the KV
 * pool timed beside them (one after each step). */
typedef struct {
    uint64_t running;
    samples ms, tps, share;
    samples bw;                 /* the pool reads' rates, bytes/s (none: the stream suite's yardstick) */
    double bytes;               /* the mean bytes a step must read */
} level;

typedef struct {
    gm_bench *b;
    gm_shape s;
    const gm_arch *a;
    uint64_t prompt, output;
    double bw;                  /* the stream suite's device-memory bandwidth, bytes/s (0: none) */
    char bw_note[160];
    serve_pool_read yard;       /* the roofline's read beside the decode steps */
    bool yard_open;
    char yard_why[200];         /* why there is no read beside the steps (when !yard_open) */
    level levels[MAX_LEVELS];
    int n_levels;
    int levels_written;         /* the levels whose rows are written (emit_levels) */
    samples prefill_ms, prefill_tps;
    uint64_t prefill_requests;
    bool ok;
    char note[400];
    unsigned verified;
    bool resume_checked;        /* a recompute's prefill step was checked */
} point;

static gm_row base_row(const point *pt, const char *variant, uint64_t batch)
{
    gm_row row = {0};
    row.suite = "serve";
    row.workload = "serve";
    row.variant = variant;
    row.pattern = gm_pattern_names[GM_PATTERN_PER_TENSOR];
    gm_row_shape_fields(&row, &pt->s);
    row.batch = batch;
    row.seq_len = pt->s.seq;
    return row;
}

static int emit_status(point *pt, gm_row_status status, const char *note)
{
    gm_row row = base_row(pt, "budget", 0);
    row.metric = "kv_pool_tokens";
    row.unit = "tokens";
    row.status = status;
    row.note = note;
    return gm_bench_emit(pt->b, &row, NULL, 0);
}

static int emit_samples(point *pt, const char *variant, uint64_t batch, const char *metric, const char *unit,
                        const samples *v, const char *note)
{
    if (!v->n)
        return 0;
    gm_stats st;
    gm_stats_compute(v->v, v->n, &st);
    gm_row row = base_row(pt, variant, batch);
    row.metric = metric;
    row.unit = unit;
    row.has_value = true;
    row.value = st.median;
    row.min = st.min;
    row.max = st.max;
    row.stdev = st.stdev;
    row.reps = v->n;
    row.note = note;
    return gm_bench_emit(pt->b, &row, v->v, v->n);
}

static int emit_one(point *pt, const char *variant, uint64_t batch, const char *metric, const char *unit,
                    double value, const char *note)
{
    gm_row row = base_row(pt, variant, batch);
    gm_row_single(&row, metric, unit, value);
    row.note = note;
    return gm_bench_emit(pt->b, &row, NULL, 0);
}

/* The roofline's bandwidth: the stream suite's read from device memory
 * (arrays of at least 4x the last-level cache) in this run, in the
 * precision of the KV pool, the bulk of what a decode step reads (the
 * read converts each element as attention does); the best over the array
 * sizes. Without a read in that precision, no roofline, and the note says
 * why. */
static void stream_bandwidth(point *pt)
{
    const gm_summary *sm = pt->b->summary;
    const char *want = gm_precision_name(gm_kv_prec(&pt->s));
    const gm_summary_entry *best = NULL;
    for (size_t i = 0; sm && i < sm->n; i++)
        if (!strcmp(sm->entries[i].suite, "stream") && !strcmp(sm->entries[i].workload, "read")
            && !strcmp(sm->entries[i].precision, want) && (!best || sm->entries[i].best > best->best))
            best = &sm->entries[i];
    if (!best) {
        snprintf(pt->bw_note, sizeof pt->bw_note,
                 "no roofline: the stream suite's read of %s from device memory did not run in this run", want);
        return;
    }
    char at[32];
    pt->bw = best->best * 1e9;
    snprintf(pt->bw_note, sizeof pt->bw_note, "roofline at the stream suite's read, %.1f GB/s (%s, %s arrays)",
             best->best, best->precision, gm_format_size(best->at_bytes, at, sizeof at));
}

/* Bytes a decode step of `rows` rows must read: every weight but the
 * embedding, the rows' embedding rows, and `kv_tokens` tokens of keys and
 * values (the running sequences'). */
static double step_bytes(const point *pt, uint64_t rows, uint64_t kv_tokens)
{
    const gm_arch *a = pt->a;
    double e = (double)gm_precision_size(pt->s.prec), emb = (double)a->vocab * (double)a->hidden;
    double kv = (double)gm_arch_kv_bytes_per_token(a, gm_precision_size(gm_kv_prec(&pt->s)));
    return ((double)gm_arch_params(a) - emb) * e + (double)rows * (double)a->hidden * e + (double)kv_tokens * kv;
}

/* Runs one step, checking it when asked; folds a mismatch into pt. */
static gm_status step(point *pt, serve_sched *sc, unsigned what, uint64_t max_running, bool verify,
                      serve_step_info *info)
{
    bool correct = true;
    char note[300] = "";
    gm_status rc = serve_sched_step(sc, what, max_running, verify && pt->ok, pt->verified, info, &correct, note,
                                    sizeof note);
    pt->verified += verify;
    if (rc == GM_OK && !correct && pt->ok) {
        pt->ok = false;
        snprintf(pt->note, sizeof pt->note, "%s", note);
    }
    return rc;
}

/* `steps` decode steps at the running count now, timed and checked (the first),
 * each followed by a timed read of as many bytes of the KV pool as the step
 * must read (the whole pool at most): the roofline's yardstick under the
 * load the step met. Its share: the bytes over the read's rate, over the
 * step's time. Without that read, the stream suite's rate in the run.
 * At a full pool the running requests outgrow the free blocks and the
 * ones admitted last are preempted, some at the level's first step: the
 * level's `running` is the median of the rows its steps decoded, each
 * step's tokens/s and share its own rows' (a level that lands on the
 * count of the level before is dropped). */
static void level_clear(level *lv)
{
    lv->ms.n = lv->tps.n = lv->share.n = lv->bw.n = 0;
}

static gm_status decode_level(point *pt, serve_sched *sc, int steps)
{
    if (pt->n_levels == MAX_LEVELS || (pt->n_levels && pt->levels[pt->n_levels - 1].running == sc->n_running))
        return GM_OK;
    level *lv = &pt->levels[pt->n_levels++];
    lv->running = sc->n_running;
    gm_status rc = GM_OK;
    double bytes = 0, rows[FULL_POOL_STEPS];
    int n_rows = 0;
    for (int k = 0; k < steps && rc == GM_OK; k++) {
        serve_step_info info;
        rc = step(pt, sc, SCHED_DECODE, 0, k == 0, &info);
        if (rc != GM_OK || !info.rows)
            break;
        if (n_rows < FULL_POOL_STEPS)
            rows[n_rows++] = info.decode_rows;
        double need = step_bytes(pt, info.decode_rows, info.kv_tokens);
        bytes += need;
        push(&lv->ms, info.ms);
        push(&lv->tps, info.decode_rows / (info.ms / 1e3));
        double bw = pt->bw;
        if (pt->yard_open) {
            double read = 0, read_ms = 0;
            bool read_ok = true;
            rc = serve_pool_read_time(&pt->yard, need, &read, &read_ms);
            if (rc == GM_OK && k == 0)    /* a level's first read checked, before it counts */
                rc = serve_pool_read_check(&pt->yard, &read_ok, pt->yard_why, sizeof pt->yard_why);
            if (rc != GM_OK)
                break;
            if (read_ok) {
                bw = read / (read_ms / 1e3);
                push(&lv->bw, bw);
            } else {              /* the stream suite's read stands in from here, the rows saying why */
                serve_pool_read_close(&pt->yard);
                pt->yard_open = false;
            }
        }
        if (bw > 0)
            push(&lv->share, need / bw * 1e3 / info.ms);
    }
    lv->bytes = lv->ms.n ? bytes / (double)lv->ms.n : 0;
    if (n_rows)
        lv->running = (uint64_t)llround(gm_median_in_place(rows, (size_t)n_rows));
    if (pt->n_levels > 1 && pt->levels[pt->n_levels - 2].running == lv->running) {
        level_clear(lv);
        pt->n_levels--;
    }
    return rc;
}

/* Prefills until `target` requests run with their prompts done. */
static gm_status fill_to(point *pt, serve_sched *sc, uint64_t target)
{
    gm_status rc = GM_OK;
    for (;;) {
        serve_step_info info;
        rc = step(pt, sc, SCHED_PREFILL | SCHED_ADMIT, target, pt->prefill_ms.n == 0, &info);
        if (rc != GM_OK || !info.rows)
            break;
        if (info.prefill_rows) {
            push(&pt->prefill_ms, info.ms);
            push(&pt->prefill_tps, info.prefill_rows / (info.ms / 1e3));
            pt->prefill_requests += info.requests;
        }
    }
    return rc;
}

/* Decodes on at the full pool until the preemptions asked for have each
 * been measured and restored, or every request is done. */
static gm_status preempt_phase(point *pt, serve_sched *sc, uint64_t cap)
{
    gm_status rc = GM_OK;
    for (uint64_t steps = 0; steps < cap && rc == GM_OK && serve_sched_done(sc) < sc->n_req; steps++) {
        serve_step_info info;
        bool swap_done = !(sc->preempt & GM_PREEMPT_SWAP) || sc->cost[0].restored;
        bool rec_done = !(sc->preempt & GM_PREEMPT_RECOMPUTE) || sc->cost[1].restored;
        if (swap_done && rec_done && sc->cost[0].count + sc->cost[1].count)
            break;
        /* A recompute's first step is checked (swap-ins: the decode step after). */
        rc = step(pt, sc, SCHED_RESUME, 0, !pt->resume_checked, &info);
        pt->resume_checked |= info.resume && info.prefill_rows;
        if (rc != GM_OK || info.resume)
            continue;
        bool check = sc->verify_next_decode;
        sc->verify_next_decode = false;
        rc = step(pt, sc, SCHED_DECODE | SCHED_PREFILL | SCHED_ADMIT, sc->e->d.max_seqs, check, &info);
        if (rc == GM_OK && !info.rows && !sc->n_running)
            break;
    }
    return rc;
}

/* The yardstick of a level's roofline: its bandwidth (bytes/s, 0: none)
 * and the note that names it. */
static double level_bandwidth(const point *pt, const level *lv, char *note, size_t len)
{
    if (!lv->bw.n) {
        if (pt->yard_why[0])
            snprintf(note, len, "%.160s (no read of the KV pool beside the steps: %.190s)", pt->bw_note, pt->yard_why);
        else
            snprintf(note, len, "%.160s", pt->bw_note);
        return pt->bw;
    }
    gm_stats st;
    gm_stats_compute(lv->bw.v, lv->bw.n, &st);
    snprintf(note, len, "roofline at the KV pool's read beside the steps, %.3f GB/s (%s, the median of %zu reads, "
             "one after each step, of as many bytes as it reads)", st.median / 1e9,
             gm_precision_name(pt->yard.p), lv->bw.n);
    return st.median;
}

/* Writes the rows of the decode levels done and not yet written. */
static int emit_levels(point *pt)
{
    int rc = 0;
    char note[600], yard[400];
    for (; pt->levels_written < pt->n_levels && rc == 0; pt->levels_written++) {
        level *lv = &pt->levels[pt->levels_written];
        double bw = level_bandwidth(pt, lv, yard, sizeof yard);
        snprintf(note, sizeof note, "%llu running sequences, device time a step; %s",
                 (unsigned long long)lv->running, yard);
        rc = emit_samples(pt, "decode", lv->running, "time", "ms", &lv->ms, note);
        if (rc == 0)
            rc = emit_samples(pt, "decode", lv->running, "tokens", "tokens/s", &lv->tps, note);
        if (rc == 0)
            rc = emit_one(pt, "decode", lv->running, "step_bytes", "bytes", lv->bytes,
                          "bytes a step must read: weights, embedding rows, every running sequence's keys and values");
        if (rc == 0 && bw > 0) {
            rc = emit_one(pt, "decode", lv->running, "roofline_time", "ms", lv->bytes / bw * 1e3, yard);
            if (rc == 0)
                rc = emit_samples(pt, "decode", lv->running, "roofline_share", "ratio", &lv->share,
                                  "the step time the memory allows over the measured time");
        }
    }
    return rc;
}

static int emit_preemption(point *pt, const serve_sched *sc)
{
    static const char *const names[] = {"swap", "recompute"};
    static const unsigned bits[] = {GM_PREEMPT_SWAP, GM_PREEMPT_RECOMPUTE};
    int rc = 0;
    for (int m = 0; m < 2 && rc == 0; m++) {
        if (!(sc->preempt & bits[m]))
            continue;
        const serve_preempt_cost *c = &sc->cost[m];
        gm_row row = base_row(pt, names[m], c->count);
        row.metric = "latency_per_block";
        row.unit = "us";
        if (!c->restored) {
            char why[200];
            snprintf(why, sizeof why, "no %s preemption %s (%u preempted): the pool did not run out, or the "
                     "sequences did not finish in time to resume", names[m], c->count ? "was resumed" : "happened",
                     c->count);
            row.status = GM_ROW_SKIPPED;
            row.note = why;
            rc = gm_bench_emit(pt->b, &row, NULL, 0);
            continue;
        }
        double ms = c->out_ms + c->in_ms;
        char note[240];
        if (m == 0)
            snprintf(note, sizeof note, "%u preempted: %llu blocks (%llu tokens) out in %.3f ms, back in %.3f ms, "
                     "pinned host memory", c->count, (unsigned long long)c->blocks, (unsigned long long)c->tokens,
                     c->out_ms, c->in_ms);
        else
            snprintf(note, sizeof note, "%u preempted: %llu blocks (%llu tokens) dropped; %u resumed by prefill "
                     "in %.3f ms", c->count, (unsigned long long)c->blocks, (unsigned long long)c->tokens,
                     c->restored, c->in_ms);
        rc = emit_one(pt, names[m], c->count, "latency_per_block", "us", ms * 1e3 / (double)(c->blocks ? c->blocks : 1),
                      note);
        if (rc == 0)
            rc = emit_one(pt, names[m], c->count, "latency_per_token", "us",
                          ms * 1e3 / (double)(c->tokens ? c->tokens : 1), note);
    }
    return rc;
}

/* The non-KV memory the engine holds, as the device counts it: its
 * tensors with a pool of one block, after a profile step that runs every
 * kernel once: a token of each of min(max_tokens, max_seqs) requests,
 * each sampled. vLLM's profile run forwards max_num_batched_tokens rows
 * because PyTorch allocates as it runs; the engine's tensors are all
 * allocated up front (its activations for max_tokens rows), so a step of
 * fewer rows holds the same memory (the driver's lazy loading and any
 * reserve included). */
static gm_status measure_non_kv(point *pt, gm_pattern_env *env, serve_dims d, uint64_t free0, uint64_t *non_kv)
{
    gm_device *dev = pt->b->dev;
    d.pool_blocks = 1;
    gm_tensor t[GM_MAX_TENSORS];
    int nt = serve_tensors(&d, t);
    gm_pattern pat;
    gm_status rc = gm_pattern_begin(&pat, env, GM_PATTERN_PER_TENSOR, t, nt);
    bool began = rc == GM_OK;
    serve_engine *e = NULL;
    if (rc == GM_OK)
        rc = serve_engine_open(dev, &pat, &d, &e);
    uint64_t reqs = d.max_tokens < d.max_seqs ? d.max_tokens : d.max_seqs;
    if (rc == GM_OK) {
        serve_step_begin(e);
        for (uint64_t q = 0; q < reqs; q++)
            serve_step_add(e, (unsigned)q, 0, serve_prompt_token(q, 0, e->V), false, true);
        rc = serve_step_upload(e);
    }
    if (rc == GM_OK)
        rc = serve_step_enqueue(e);
    if (rc == GM_OK)
        rc = dev->backend->synchronize(dev, 0);
    uint64_t free1 = 0, total = 0;
    if (rc == GM_OK)
        rc = gm_device_mem_info(dev, &free1, &total);
    uint64_t block = serve_block_bytes(&d);
    *non_kv = free0 > free1 + block ? free0 - free1 - block : 0;
    serve_engine_close(e);
    if (began)
        gm_pattern_end(&pat);
    return rc;
}

static int run_point(point *pt, gm_pattern_env *env)
{
    gm_bench *b = pt->b;
    gm_device *dev = b->dev;
    gm_shape *s = &pt->s;
    const gm_arch *a = pt->a;
    char why[400];
    pt->output = s->output_tokens ? s->output_tokens : (s->seq / 8 ? s->seq / 8 : 1);
    uint64_t max_len = s->max_model_len ? s->max_model_len : a->context;
    if (pt->output >= s->seq) {
        snprintf(why, sizeof why, "--output-tokens %llu leaves no prompt in a request of %llu tokens",
                 (unsigned long long)pt->output, (unsigned long long)s->seq);
        return emit_status(pt, GM_ROW_SKIPPED, why);
    }
    if (max_len && s->seq > max_len) {
        snprintf(why, sizeof why, "a request of %llu tokens is longer than %s (%llu tokens)",
                 (unsigned long long)s->seq, s->max_model_len ? "--max-model-len" : "the model's context",
                 (unsigned long long)max_len);
        return emit_status(pt, GM_ROW_SKIPPED, why);
    }
    pt->prompt = s->seq - pt->output;
    uint64_t free0 = 0, total = 0;
    gm_status st = gm_device_mem_info(dev, &free0, &total);
    gm_serve_opts so = {.total = total, .utilization = s->gpu_util, .max_batched_tokens = s->max_batched_tokens,
                        .max_seqs = s->max_seqs, .max_model_len = max_len, .block_tokens = s->block_tokens,
                        .reserve = s->serve_reserve, .act = s->prec, .kv = gm_kv_prec(s),
                        .weights = gm_arch_params(a) * gm_precision_size(s->prec)};
    gm_serve_defaults(a, &so);
    uint64_t requested = (uint64_t)ceil((double)total * so.utilization);
    if (st == GM_OK && free0 < requested) {
        char f[32], r[32];
        snprintf(why, sizeof why, "%s free is less than the %s the engine asks for (%g of the device's memory): "
                 "lower --gpu-memory-utilization", gm_format_size(free0, f, sizeof f),
                 gm_format_size(requested, r, sizeof r), so.utilization);
        return emit_status(pt, GM_ROW_SKIPPED, why);
    }
    serve_dims d = {.a = *a, .p = s->prec, .kp = gm_kv_prec(s), .block_tokens = so.block_tokens, .pool_blocks = 1,
                    .max_tokens = so.max_batched_tokens, .max_seqs = so.max_seqs,
                    .max_blocks = cdiv(so.max_model_len, so.block_tokens)};
    const char *unsup = serve_unsupported(&d);
    if (unsup) {
        snprintf(why, sizeof why, "the serving engine runs %s", unsup);
        return emit_status(pt, GM_ROW_UNSUPPORTED, why);
    }
    uint64_t non_kv = 0;
    if (st == GM_OK)
        st = measure_non_kv(pt, env, d, free0, &non_kv);
    if (st != GM_OK) {
        if (st == GM_ERR_DEVICE_LOST)
            b->device_lost = true;
        return emit_status(pt, gm_row_status_of(st), dev->err.msg);
    }
    /* vLLM's arithmetic on the measured figure; plan's on the modelled. */
    gm_serve_budget plan;
    char plan_err[300] = "";
    bool planned = gm_serve_plan(a, &so, &plan, plan_err, sizeof plan_err) == 0;
    uint64_t page = so.block_tokens * a->kv_heads * a->head_dim * 2 * gm_precision_size(d.kp);
    d.pool_blocks = requested > non_kv ? (requested - non_kv) / page / a->layers : 0;
    /* The pool is one allocation: no more than the largest the device
     * allows (an OpenCL device's CL_DEVICE_MAX_MEM_ALLOC_SIZE). */
    uint64_t budget_blocks = d.pool_blocks, max_alloc = dev->info.max_alloc;
    if (max_alloc && d.pool_blocks > max_alloc / serve_block_bytes(&d))
        d.pool_blocks = max_alloc / serve_block_bytes(&d);
    uint64_t per_request = cdiv(s->seq, d.block_tokens), per_prompt = cdiv(pt->prompt, d.block_tokens);
    if (d.pool_blocks < per_request) {
        snprintf(why, sizeof why, "the KV pool holds %llu blocks of %llu tokens (%llu bytes requested, %llu held "
                 "besides the KV cache); a request of %llu tokens needs %llu", (unsigned long long)d.pool_blocks,
                 (unsigned long long)d.block_tokens, (unsigned long long)requested, (unsigned long long)non_kv,
                 (unsigned long long)s->seq, (unsigned long long)per_request);
        return emit_status(pt, GM_ROW_SKIPPED, why);
    }
    gm_tensor t[GM_MAX_TENSORS];
    int nt = serve_tensors(&d, t);
    gm_pattern pat;
    serve_engine *e = NULL;
    uint64_t before = 0, after = 0;
    gm_device_mem_info(dev, &before, &total);
    st = gm_pattern_begin(&pat, env, GM_PATTERN_PER_TENSOR, t, nt);
    bool began = st == GM_OK;
    if (st == GM_OK)
        st = serve_engine_open(dev, &pat, &d, &e);
    gm_device_mem_info(dev, &after, &total);
    uint64_t n_req = d.pool_blocks / per_prompt < d.max_seqs ? d.pool_blocks / per_prompt : d.max_seqs;
    serve_sched sc = {0};
    if (st == GM_OK)
        st = serve_sched_init(&sc, e, n_req, pt->prompt, pt->output, s->prefill_requests, s->preempt,
                              2 * per_request);
    sc.fault = b->output_fault;
    /* The roofline's read beside the decode steps; where it cannot be
     * built, the stream suite's read in the run stands in, and the rows
     * say why. */
    if (st == GM_OK) {
        gm_status yst = serve_pool_read_open(&pt->yard, e);
        pt->yard_open = yst == GM_OK;
        if (yst == GM_ERR_DEVICE_LOST)
            st = yst;
        else if (!pt->yard_open)
            snprintf(pt->yard_why, sizeof pt->yard_why, "%.190s", dev->err.msg);
    }
    /* The ramp: 1, 2, 4, ... running sequences, decode steps at each;
     * then every request the pool takes, and preemption. A level's rows
     * are written when it is done, every check so far passed (its first
     * step's among them), so that a card's first rows come within seconds
     * of the point's start; a later failure ends the point with its
     * status row, the rest of its figures unwritten. */
    int wrote = 0;
    for (uint64_t n = 1; st == GM_OK && wrote == 0 && n < n_req; n *= 2) {
        st = fill_to(pt, &sc, n);
        if (st == GM_OK && sc.n_running == n)
            st = decode_level(pt, &sc, DECODE_STEPS);
        if (st == GM_OK && pt->ok)
            wrote = emit_levels(pt);
    }
    if (wrote) {
        if (pt->yard_open)
            serve_pool_read_close(&pt->yard);
        serve_sched_release(&sc);
        serve_engine_close(e);
        if (began)
            gm_pattern_end(&pat);
        return wrote;
    }
    if (st == GM_OK)
        st = fill_to(pt, &sc, n_req);
    uint64_t full = sc.n_running, peak = sc.peak_blocks;
    uint64_t full_used = serve_sched_used_blocks(&sc), full_tokens = serve_sched_held_tokens(&sc);
    if (st == GM_OK)
        st = decode_level(pt, &sc, FULL_POOL_STEPS);
    peak = sc.peak_blocks > peak ? sc.peak_blocks : peak;
    if (st == GM_OK)
        st = preempt_phase(pt, &sc, 4 * pt->output + 64);
    int rc = 0;
    if (st != GM_OK) {
        if (st == GM_ERR_DEVICE_LOST)
            b->device_lost = true;
        rc = emit_status(pt, gm_row_status_of(st), dev->err.msg);
    } else if (!pt->ok) {
        rc = emit_status(pt, GM_ROW_MISMATCH, pt->note);
    } else {
        char note[400], nb[32], pb[32], rb[32], tb[32];
        uint64_t tokens = d.pool_blocks * d.block_tokens;
        snprintf(note, sizeof note, "pool of %llu blocks of %llu tokens: %s of %s requested (%g of %s) after %s "
                 "measured besides the KV cache; plan --mode serve: %.160s",
                 (unsigned long long)d.pool_blocks, (unsigned long long)d.block_tokens,
                 gm_format_size(d.pool_blocks * serve_block_bytes(&d), pb, sizeof pb),
                 gm_format_size(requested, rb, sizeof rb), so.utilization, gm_format_size(total, tb, sizeof tb),
                 gm_format_size(non_kv, nb, sizeof nb), planned ? "" : plan_err);
        if (planned)
            snprintf(note + strlen(note), sizeof note - strlen(note), "%llu tokens (%llu modelled besides it)",
                     (unsigned long long)plan.tokens, (unsigned long long)plan.non_kv);
        if (budget_blocks > d.pool_blocks)
            snprintf(note + strlen(note), sizeof note - strlen(note), "; the budget's %llu blocks cut to the "
                     "device's largest allocation", (unsigned long long)budget_blocks);
        gm_row row = base_row(pt, "budget", n_req);
        gm_row_single(&row, "kv_pool_tokens", "tokens", (double)tokens);
        row.measured_bytes = before > after ? before - after : 0;
        row.note = note;
        rc = gm_bench_emit(b, &row, NULL, 0);
        if (rc == 0 && planned)
            rc = emit_one(pt, "budget", n_req, "kv_pool_vs_plan", "ratio", (double)tokens / (double)plan.tokens,
                          "the measured pool's tokens over plan --mode serve's");
        snprintf(note, sizeof note, "requests of %llu tokens (%llu prompt, %llu decoded) the pool holds at once; at "
                 "--max-model-len %llu: %.2f", (unsigned long long)s->seq, (unsigned long long)pt->prompt,
                 (unsigned long long)pt->output, (unsigned long long)so.max_model_len,
                 (double)d.pool_blocks / (double)cdiv(so.max_model_len, d.block_tokens));
        if (rc == 0)
            rc = emit_one(pt, "budget", n_req, "max_concurrency", "requests",
                          (double)d.pool_blocks / (double)per_request, note);
        snprintf(note, sizeof note, "%llu of %llu blocks held at the most, %llu sequences running at the full pool",
                 (unsigned long long)peak, (unsigned long long)d.pool_blocks, (unsigned long long)full);
        if (rc == 0)
            rc = emit_one(pt, "pool", full, "occupancy", "ratio", (double)peak / (double)d.pool_blocks, note);
        snprintf(note, sizeof note, "at the full pool, %llu tokens' keys and values in the %llu blocks held (%llu "
                 "slots): the rest is each sequence's last block's unfilled tail", (unsigned long long)full_tokens,
                 (unsigned long long)full_used, (unsigned long long)(full_used * d.block_tokens));
        if (rc == 0 && full_used)
            rc = emit_one(pt, "pool", full, "token_share", "ratio",
                          (double)full_tokens / (double)(full_used * d.block_tokens), note);
        snprintf(note, sizeof note, "chunks of up to %llu tokens, %llu requests' prompts%s",
                 (unsigned long long)d.max_tokens, (unsigned long long)pt->prefill_requests,
                 s->prefill_requests && s->prefill_requests < n_req ? "; the others copy request 0's blocks" : "");
        if (rc == 0)
            rc = emit_samples(pt, "prefill", pt->prefill_requests, "tokens", "tokens/s", &pt->prefill_tps, note);
        if (rc == 0)
            rc = emit_samples(pt, "prefill", pt->prefill_requests, "time", "ms", &pt->prefill_ms, note);
        if (rc == 0)
            rc = emit_levels(pt);
        if (rc == 0)
            rc = emit_preemption(pt, &sc);
    }
    if (pt->yard_open)
        serve_pool_read_close(&pt->yard);
    serve_sched_release(&sc);
    serve_engine_close(e);
    if (began)
        gm_pattern_end(&pat);
    return rc;
}

static int serve_run(gm_bench *b)
{
    const uint64_t *seqs;
    size_t n_seqs;
    seqs_of(b, &seqs, &n_seqs);
    int rc = 0;
    gm_pattern_env env;
    gm_pattern_env_init(&env, b->dev, b->opts);
    for (int p = 0; p < GM_PREC_COUNT && rc == 0; p++) {
        if (!(b->opts->precisions & (1u << p)))
            continue;
        for (size_t si = 0; si < n_seqs && rc == 0; si++) {
            point *pt = calloc(1, sizeof *pt);
            if (!pt) {
                rc = -1;
                break;
            }
            pt->b = b;
            pt->ok = true;
            pt->s = b->opts->shape;
            gm_shape_set_roles(&pt->s, &b->opts->shape, (gm_precision)p);
            pt->s.serve = true;
            pt->s.seq = seqs[si];
            pt->s.batch = 1;
            if (!pt->s.preempt)
                pt->s.preempt = GM_PREEMPT_SWAP | GM_PREEMPT_RECOMPUTE;
            gm_shape_complete(&pt->s);
            pt->a = &pt->s.arch;
            stream_bandwidth(pt);
            if (!gm_bench_resuming(b))
                rc = gm_shape_has_arch(&pt->s)
                         ? run_point(pt, &env)
                         : emit_status(pt, GM_ROW_SKIPPED, "the serve suite runs a whole model: --model PRESET or "
                                                           "a config.json");
            char label[96];
            snprintf(label, sizeof label, "serve %s s=%llu", gm_precision_name(pt->s.prec),
                     (unsigned long long)pt->s.seq);
            for (int i = 0; i < MAX_LEVELS; i++) {     /* a dropped level's too (decode_level) */
                free(pt->levels[i].ms.v);
                free(pt->levels[i].tps.v);
                free(pt->levels[i].share.v);
                free(pt->levels[i].bw.v);
            }
            free(pt->prefill_ms.v);
            free(pt->prefill_tps.v);
            free(pt);
            rc = gm_bench_point_finished(b, rc, label);
        }
    }
    gm_pattern_env_release(&env);
    return gm_bench_suite_end(b, rc);
}

const gm_suite gm_suite_serve = {
    .name = "serve",
    .summary = "a serving engine: KV budget, chunked prefill, decode against running sequences, preemption",
    .count_points = serve_count,
    .run = serve_run,
};
