/*
 * The oom suite: where memory runs out.
 *   largest_alloc  the largest single allocation that succeeds (and is
 *                  touched), exact to 1 MiB: from the free memory, gallop
 *                  and bisect
 *   largest_total  the most memory obtainable in chunks, each touched:
 *                  chunks halve on failure down to 1 MiB
 *   max_batch      for each workload, precision, sequence length and
 *                  pattern: the largest batch B that is allocated, run and
 *                  verified while B + 1 is not (--search model: from the
 *                  memory model's guess, see search_model; --search
 *                  bisect: double until the first failure, then bisect),
 *                  with the memory model's bytes at B and B + 1, the
 *                  probes it took, the search time and the model's batch; and
 *                  what a halving search (start high, halve on OOM, as
 *                  training helpers do) would have answered; for the
 *                  fragmented pattern also the batches lost to it
 *   fragmentation  after the fragmented pattern's preparation, the largest
 *                  block still allocatable against the free total
 *   allocator      allocation and free latency (p50, p99) by block size at
 *                  fill levels of 0, 50 and 90%, for raw allocation, the
 *                  caching pool and the driver's async pool
 * --oom-parts picks among them (alloc: largest_alloc and largest_total;
 * fragmentation; allocator; batch: max_batch); all by default.
 * Every probe goes through the device's cap, so --mem-limit emulates a
 * smaller card. This process never touches the device while it searches
 * (it closes its own context): every probe runs in a worker process
 * (bench/oom/worker.c). A probe whose worker dies (a driver abort, the kernel's
 * OOM killer) is a `crash` row, one that overruns --probe-timeout a
 * `timeout` row; the search counts it as not fitting and goes on with a
 * fresh worker.
 */
#include "bench/model/mem_plan.h"
#include "bench/pattern/pattern.h"
#include "bench/model/precision_roles.h"
#include "bench/oom/probe.h"
#include "bench/workloads/runnable.h"
#include "lib/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)
#define MAX_BATCH ((uint64_t)1 << 24)

static int emit_value(gm_bench *b, const char *workload, const char *metric, const char *unit, double value,
                      uint64_t bytes, const char *note)
{
    gm_row row = {0};
    row.suite = "oom";
    row.workload = workload;
    row.pattern = "per-tensor";
    row.bytes = bytes;
    gm_row_single(&row, metric, unit, value);
    row.note = note;
    return gm_bench_emit(b, &row, NULL, 0);
}

/* Writes the row of a probe that did not answer with a measurement: its
 * worker died (crash) or hung (timeout), or the device was out of memory. */
static int emit_lost_probe(gm_bench *b, gm_row row, const gm_probe_result *r)
{
    row.status = r->outcome == GM_PROBE_TIMEOUT ? GM_ROW_TIMEOUT
                 : r->outcome == GM_PROBE_OOM   ? GM_ROW_OOM
                                                : GM_ROW_CRASH;
    row.has_value = false;
    row.note = r->note;
    return gm_bench_emit(b, &row, NULL, 0);
}

/* The row of a probe that failed for another reason than memory. */
static int emit_failed_probe(gm_bench *b, gm_row row, const gm_probe_result *r)
{
    b->device_lost = r->device_lost;
    if (r->device_lost)
        snprintf(b->error, sizeof b->error, "%s", r->note);
    row.status = r->failed_as;
    row.has_value = false;
    row.note = r->note;
    return gm_bench_emit(b, &row, NULL, 0);
}

/* The next probe of a gallop-then-bisect search for the largest value
 * that fits: lo fits (0: none yet), hi does not (or lies past the end),
 * hi - lo > 1. Until a failure is seen it gallops up from lo (lo + 1,
 * lo + 2, lo + 4, ...), until a fit is seen down from hi, then it bisects;
 * *step doubles at each gallop. The result lies strictly between lo and
 * hi, so the search ends. */
static uint64_t gallop_next(uint64_t lo, uint64_t hi, bool fit_seen, bool fail_seen, uint64_t *step)
{
    if (fit_seen && fail_seen)
        return lo + (hi - lo) / 2;
    uint64_t c = !fail_seen ? (hi - lo > *step ? lo + *step : hi - 1) : (hi - lo > *step ? hi - *step : lo + 1);
    *step *= 2;
    return c;
}

/* The largest single allocation, exact to 1MiB: the first probe asks for
 * what the device says is free (under the cap, and at most the driver's
 * largest allocation and the usable total), then the search gallops from
 * there (+-1MiB, +-2MiB, +-4MiB, ...) until the answer is bracketed, then
 * bisects: lo MiB allocated and touched, lo + 1 not (or past the end). */
static int largest_alloc(gm_bench *b, gm_worker *w)
{
    gm_device *dev = b->dev;
    double t0 = gm_now();
    uint64_t total = gm_device_usable_total(dev);
    uint64_t lo = 0, hi = total / MIB + 1;   /* lo MiB fits; hi MiB does not (or is past the end) */
    gm_probe_result fr;
    gm_worker_free_memory(w, &fr);
    uint64_t start = fr.outcome == GM_PROBE_FITS && fr.value ? fr.value : total;
    if (dev->info.max_alloc && start > dev->info.max_alloc)
        start = dev->info.max_alloc;
    start /= MIB;
    start = start < 1 ? 1 : start >= hi ? hi - 1 : start;
    int probes = 0, rc = 0;
    bool fit_seen = false, fail_seen = false;
    uint64_t step = 1;
    gm_row row = {.suite = "oom", .workload = "alloc", .pattern = "per-tensor", .metric = "largest_alloc",
                  .unit = "bytes"};
    while (hi - lo > 1 && rc == 0) {
        uint64_t mid = probes == 0 ? start : gallop_next(lo, hi, fit_seen, fail_seen, &step);
        gm_probe_result r;
        gm_worker_alloc(w, mid * MIB, &r);
        probes++;
        if (r.outcome == GM_PROBE_FAILED)
            return emit_failed_probe(b, row, &r);
        bool fits = r.outcome == GM_PROBE_FITS;
        if (fits) {
            lo = mid;
        } else {
            hi = mid;
            row.bytes = mid * MIB;
            if (r.outcome != GM_PROBE_OOM)
                rc = emit_lost_probe(b, row, &r);
        }
        fit_seen |= fits;
        fail_seen |= !fits;
    }
    char note[300], a[32], m[32], c[32], f[32];
    snprintf(note, sizeof note, "%d probes in %.2f s from %s free; advertised total %s, largest allocation %s%s%s%s",
             probes, gm_now() - t0, gm_format_size(start * MIB, f, sizeof f),
             gm_format_size(dev->info.total_mem, a, sizeof a), gm_format_size(dev->info.max_alloc, m, sizeof m),
             dev->mem_limit ? ", under the " : "", dev->mem_limit ? gm_format_size(dev->mem_limit, c, sizeof c) : "",
             dev->mem_limit ? " cap" : "");
    return rc ? rc : emit_value(b, "alloc", "largest_alloc", "bytes", (double)(lo * MIB), lo * MIB, note);
}

static int largest_total(gm_bench *b, gm_worker *w)
{
    gm_probe_result r;
    double t0 = gm_now();
    gm_worker_total(w, &r);
    gm_row row = {.suite = "oom", .workload = "alloc", .pattern = "per-tensor", .metric = "largest_total",
                  .unit = "bytes"};
    if (r.outcome == GM_PROBE_FAILED)
        return emit_failed_probe(b, row, &r);
    if (r.outcome != GM_PROBE_FITS)
        return emit_lost_probe(b, row, &r);
    char note[360];
    snprintf(note, sizeof note, "%s in %.2f s", r.note, gm_now() - t0);
    return emit_value(b, "alloc", "largest_total", "bytes", (double)r.value, r.value, note);
}

/* A search over one (workload, precision, seq, implementation, pattern). */
typedef struct {
    gm_bench *b;
    gm_worker *w;
    const gm_workload *r;
    gm_probe_point point;
    gm_row row;                  /* the search's row fields */
    int probes;
    uint64_t fragment_bytes;     /* fragmented: what the preparation left live */
    uint64_t held;               /* what the device held at the last probe that fit (0: not known) */
    gm_shape shape;              /* the search's shape (its batch varies) */
} search;

/* One probe at `batch`: *fits, or a failure. A lost worker writes its row
 * and counts as not fitting; any other failure is returned as 1 with its
 * result in *failed. Returns -1 if a row could not be written. */
static int probe(search *sr, uint64_t batch, bool *fits, gm_probe_result *failed)
{
    sr->point.batch = batch;
    gm_worker_point(sr->w, &sr->point, failed);
    sr->probes++;
    *fits = failed->outcome == GM_PROBE_FITS;
    if (*fits || failed->outcome == GM_PROBE_OOM)
        sr->fragment_bytes = failed->value;
    if (*fits)
        sr->held = failed->n_stats > GM_POINT_HELD ? (uint64_t)failed->stats[GM_POINT_HELD] : 0;
    if (failed->outcome == GM_PROBE_CRASH || failed->outcome == GM_PROBE_TIMEOUT) {
        gm_row row = sr->row;
        row.metric = "max_batch";
        row.unit = "batch";
        row.batch = batch;
        return emit_lost_probe(sr->b, row, failed) ? -1 : 0;
    }
    return failed->outcome == GM_PROBE_FAILED;
}

static uint64_t model_at(const gm_workload *r, gm_shape s, uint64_t batch)
{
    gm_tensor t[GM_MAX_TENSORS];
    s.batch = batch;
    gm_shape_complete(&s);
    int n = r->tensors(&s, t);
    return n < 0 ? UINT64_MAX : gm_tensors_total(t, n);
}

/* The largest batch up to `upper` whose model fits `bytes` (0 if none). */
static uint64_t model_batch(const gm_workload *r, const gm_shape *s, uint64_t bytes, uint64_t upper)
{
    uint64_t lo = 0;
    for (uint64_t hi = upper + 1; hi - lo > 1;) {
        uint64_t mid = lo + (hi - lo) / 2;
        *(model_at(r, *s, mid) <= bytes ? &lo : &hi) = mid;
    }
    return lo;
}

/* The tensors of the search's point at `batch`: their count, or -1. */
static int tensors_at(const search *sr, uint64_t batch, gm_tensor *t)
{
    gm_shape s = sr->shape;
    s.batch = batch;
    gm_shape_complete(&s);
    return sr->r->tensors(&s, t);
}

/* What the device holds for the search's point at `batch` by the model
 * and the pattern's known rules (gm_pattern_bytes). */
static uint64_t pattern_at(const search *sr, uint64_t batch)
{
    gm_tensor t[GM_MAX_TENSORS];
    int n = tensors_at(sr, batch, t);
    return n < 0 ? UINT64_MAX : gm_pattern_bytes(sr->point.pattern, t, n);
}

/* Does the search's point at `batch` fit `budget` bytes, by the model and
 * the pattern's known rules (gm_pattern_fits)? */
static bool pattern_fits(const search *sr, uint64_t batch, uint64_t budget)
{
    gm_tensor t[GM_MAX_TENSORS];
    int n = tensors_at(sr, batch, t);
    return n >= 0 && gm_pattern_fits(sr->point.pattern, t, n, budget, sr->b->opts->prealloc_share);
}

/* After this many wrong predictions the model search stops predicting
 * and only gallops and bisects. */
#define MAX_MISSES 2

/* The largest batch that fits (pattern_fits) free_b less
 * `overhead` (what the device held beyond them: the context's reserve,
 * allocation granularity; negative when it held less). */
static uint64_t model_guess(const search *sr, uint64_t free_b, int64_t overhead)
{
    uint64_t budget;
    if (overhead >= 0)
        budget = free_b > (uint64_t)overhead ? free_b - (uint64_t)overhead : 0;
    else
        budget = (uint64_t)-overhead > UINT64_MAX - free_b ? UINT64_MAX : free_b + (uint64_t)-overhead;
    uint64_t lo = 0;
    for (uint64_t hi = MAX_BATCH + 1; hi - lo > 1;) {
        uint64_t mid = lo + (hi - lo) / 2;
        *(pattern_fits(sr, mid, budget) ? &lo : &hi) = mid;
    }
    return lo;
}

/*
 * The model-guided search (--search model). The prediction starts at
 * the guess (*guess_out), the largest batch whose memory model, as the
 * pattern allocates it, fits free_b: the search probes it, then the batch
 * after it. A probe that fits teaches the
 * overhead (what the device really held, less the model's bytes there: a
 * pool's segments, allocation granularity), which corrects the
 * prediction; an OOM before any fit teaches what the pattern held besides
 * the tensors (the fragmented pattern's fragments). A probe that
 * contradicts the prediction starts a gallop from the bound it moved
 * (+-1, +-2, +-4, ...) until the answer is bracketed, then bisection;
 * after MAX_MISSES wrong predictions the model is not asked again. Every
 * probe lies strictly inside the bracket, so the search ends, and the
 * answer is exact: *lo allocated, ran and verified, *hi (0: the search
 * limit) did not. Returns as probe() does; *overhead gets what was learned.
 */
static int search_model(search *sr, uint64_t free_b, uint64_t *guess_out, uint64_t *lo_out, uint64_t *hi_out,
                        int64_t *overhead_out, gm_probe_result *res)
{
    uint64_t guess = model_guess(sr, free_b, 0);
    uint64_t lo = 0, hi = 0, pred = guess, step = 1;
    *guess_out = guess;
    int64_t overhead = 0;
    bool trusted = guess > 0, fit_seen = false;
    int misses = 0, st = 0;
    while (st == 0 && (hi ? hi - lo > 1 : lo < MAX_BATCH)) {
        uint64_t top = hi ? hi - 1 : MAX_BATCH;       /* the largest batch still open */
        uint64_t c;
        bool expect_fit = false;
        if (trusted) {
            uint64_t p = pred < lo ? lo : pred > top ? top : pred;
            c = p > lo ? p : p + 1;
            expect_fit = c == p;
        } else {
            c = gallop_next(lo, hi ? hi : MAX_BATCH + 1, fit_seen, hi != 0, &step);
        }
        bool fits;
        st = probe(sr, c, &fits, res);
        if (st)
            break;
        *(fits ? &lo : &hi) = c;
        fit_seen |= fits;
        if (trusted && fits != expect_fit) {
            trusted = false;
            misses++;
            step = 1;
        }
        /* Learn the overhead and correct the prediction. */
        int64_t learned = overhead;
        /* growth and prealloc hold regions sized by their own rules (pattern_fits), not by the batch */
        if (fits && sr->held && sr->point.pattern != GM_PATTERN_PREALLOC && sr->point.pattern != GM_PATTERN_GROWTH)
            learned = (int64_t)sr->held - (int64_t)pattern_at(sr, c);
        else if (!fits && !fit_seen && (int64_t)sr->fragment_bytes > overhead)
            learned = (int64_t)sr->fragment_bytes;
        if (learned != overhead) {
            overhead = learned;
            uint64_t next = model_guess(sr, free_b, overhead);
            if (misses < MAX_MISSES && next >= lo && (!hi || next < hi) && next != pred) {
                pred = next;
                trusted = true;
            }
        }
    }
    *lo_out = lo;
    *hi_out = hi;
    *overhead_out = overhead;
    return st;
}

/* Finds the largest batch and writes its rows. */
static int max_batch(gm_bench *b, gm_worker *w, const gm_workload *r, const gm_shape *s, const char *impl,
                     gm_pattern_kind pattern)
{
    search sr = {b, w, r, {0}, {0}, 0, 0, 0, *s};
    int widx = 0;
    while (gm_workloads[widx] != r)
        widx++;
    sr.point = (gm_probe_point){widx, "", pattern, gm_sweep_prec(s), 1, s->seq, s->train, s->serve, s->tune};
    snprintf(sr.point.impl, sizeof sr.point.impl, "%s", impl);
    gm_row *row = &sr.row;
    row->suite = "oom";
    row->workload = r->name;
    row->variant = impl;
    row->pattern = gm_pattern_names[pattern];
    gm_row_shape_fields(row, s);
    row->seq_len = s->seq;
    if (gm_shape_has_arch(s) && s->arch.context && s->seq > s->arch.context) {
        /* No batch of sequences longer than the model takes. */
        char why[200];
        snprintf(why, sizeof why, "seq %llu is longer than %s's context, %llu tokens (max_position_embeddings)",
                 (unsigned long long)s->seq, s->arch.name, (unsigned long long)s->arch.context);
        row->metric = "max_batch";
        row->unit = "batch";
        row->status = GM_ROW_SKIPPED;
        row->note = why;
        return gm_bench_emit(b, row, NULL, 0);
    }
    double t0 = gm_now();
    /* The memory the probes find free (under the cap): the model's guess
     * is the largest batch whose tensors fit it. */
    gm_probe_result res;
    gm_worker_free_memory(w, &res);
    uint64_t total = gm_device_usable_total(b->dev);
    uint64_t free_b = res.outcome == GM_PROBE_FITS && res.value ? res.value : total;
    uint64_t model = model_batch(r, s, free_b, MAX_BATCH), guess = model;
    uint64_t lo = 0, hi = 0;     /* lo fits (0: nothing does yet); hi fails (0: none failed yet) */
    uint64_t halving = 0;
    int64_t overhead = 0;
    int st = 0;
    bool fits;
    if (!b->opts->search_bisect) {
        st = search_model(&sr, free_b, &guess, &lo, &hi, &overhead, &res);
        /* Halving from the first failing power of two lands on the largest
         * power of two that fits: at most lo (fitting is monotonic). */
        for (halving = lo ? 1 : 0; halving && halving <= lo / 2;)
            halving *= 2;
    } else {
        for (uint64_t batch = 1; batch <= MAX_BATCH && st == 0; batch *= 2) {
            st = probe(&sr, batch, &fits, &res);
            if (st == 0 && !fits) {
                hi = batch;
                break;
            }
            if (st == 0)
                lo = batch;
        }
        halving = lo;            /* halving from the first failing power of two lands here */
        while (st == 0 && hi && hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            st = probe(&sr, mid, &fits, &res);
            if (st == 0)
                *(fits ? &lo : &hi) = mid;
        }
    }
    if (st < 0)
        return -1;
    if (st > 0) {
        row->metric = "max_batch";
        row->unit = "batch";
        row->batch = sr.point.batch;
        return emit_failed_probe(b, *row, &res);
    }
    char note[512], at[32], next[32], fb[32], ob[32];
    double took = gm_now() - t0;
    row->batch = lo;
    row->model_bytes = lo ? model_at(r, *s, lo) : 0;
    int n = snprintf(note, sizeof note, "%d probes in %.2f s; the model holds %s at batch %llu and %s at %llu%s",
                     sr.probes, took, gm_format_size(row->model_bytes, at, sizeof at), (unsigned long long)lo,
                     gm_format_size(model_at(r, *s, lo + 1), next, sizeof next), (unsigned long long)(lo + 1),
                     hi ? "" : " (the search limit)");
    if (n > 0 && (size_t)n < sizeof note)
        n += snprintf(note + n, sizeof note - (size_t)n, "; search %s, guess %llu for %s free%s%s%s",
                      b->opts->search_bisect ? "bisect" : "model", (unsigned long long)guess,
                      gm_format_size(free_b, fb, sizeof fb), overhead ? ", overhead learned " : "",
                      overhead < 0 ? "-" : "",
                      overhead ? gm_format_size((uint64_t)(overhead < 0 ? -overhead : overhead), ob, sizeof ob) : "");
    if (gm_probe_runs_one_sequence(r, s) && n > 0 && (size_t)n < sizeof note) {
        char ran[64] = "its first sequence";
        if (gm_probe_tokens(s) < s->seq)
            snprintf(ran, sizeof ran, "the first %llu tokens of its first sequence",
                     (unsigned long long)gm_probe_tokens(s));
        n += snprintf(note + n, sizeof note - (size_t)n, "; each probe allocated the whole batch and ran and "
                      "verified %s", ran);
    }
    if (gm_train_synthetic(r, s) && n > 0 && (size_t)n < sizeof note)
        snprintf(note + n, sizeof note - (size_t)n, "; %s", GM_TRAIN_NOTE);
    struct { const char *metric, *unit; double value; } out[] = {
        {"max_batch", "batch", (double)lo},
        {"max_batch_halving", "batch", (double)halving},
        {"probes", "count", sr.probes},
        {"device_fraction", "ratio", total ? (double)row->model_bytes / (double)total : 0},
        /* What the memory model says fits the free memory (the dashed
         * frontier); the search's guess, as the pattern allocates the
         * model's tensors, is in the note. */
        {"max_batch_model", "batch", (double)model},
        {"search_time", "s", took},
        {"max_batch_lost", "batch", 0},
    };
    size_t n_out = sizeof out / sizeof out[0] - 1;
    char lost_note[200];
    if (pattern == GM_PATTERN_FRAGMENTED) {
        /* What the free total left by the fragments would hold by the model. */
        uint64_t free_total = total > sr.fragment_bytes ? total - sr.fragment_bytes : 0;
        uint64_t fit = model_batch(r, s, free_total, hi ? hi : lo);
        out[n_out++].value = fit > lo ? (double)(fit - lo) : 0.0;
        char lb[32];
        snprintf(lost_note, sizeof lost_note, "the %s left free by the fragments holds batch %llu by the model",
                 gm_format_size(free_total, lb, sizeof lb), (unsigned long long)fit);
    }
    int rc = 0;
    for (size_t i = 0; i < n_out && rc == 0; i++) {
        gm_row_single(row, out[i].metric, out[i].unit, out[i].value);
        row->note = i == 0 ? note : i == 6 ? lost_note : gm_train_synthetic(r, s) ? GM_TRAIN_NOTE : NULL;
        rc = gm_bench_emit(b, row, NULL, 0);
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
static int each_search(gm_bench *b, gm_worker *worker,
                       int (*fn)(gm_bench *, gm_worker *, const gm_workload *, const gm_shape *, const char *,
                                 gm_pattern_kind))
{
    const uint64_t *seqs;
    size_t n_seqs;
    seqs_of(b, &seqs, &n_seqs);
    int count = 0;
    /* every workload in every mode it runs */
    for (int wm = 0; wm < GM_RUNNABLE_WORKLOAD_COUNT * GM_PLAN_MODE_COUNT; wm++) {
        int w = wm / GM_PLAN_MODE_COUNT, m = wm % GM_PLAN_MODE_COUNT;
        const gm_workload *r = gm_workloads[w];
        if (!(b->opts->workloads & (1u << w)) || !(b->opts->modes & (1u << m)) || !gm_workload_in_mode(r, m))
            continue;
        for (int p = 0; p < GM_PREC_COUNT; p++) {
            if (!(b->opts->precisions & (1u << p)))
                continue;
            const char *impls[GM_MAX_IMPLS];
            gm_shape ps = b->opts->shape;
            gm_shape_set_roles(&ps, &b->opts->shape, (gm_precision)p);
            int n_impls = r->impls(b->dev, &ps, impls);
            for (size_t si = 0; si < n_seqs; si++)
                for (int i = 0; i < n_impls; i++)
                    for (int pat = 0; pat < GM_PATTERN_COUNT; pat++) {
                        if (!(b->opts->patterns & (1u << pat)))
                            continue;
                        count++;
                        if (!fn)
                            continue;
                        gm_shape s = b->opts->shape;
                        gm_shape_set_roles(&s, &b->opts->shape, (gm_precision)p);
                        s.train = m == GM_PLAN_TRAIN;
                        s.tune = m == GM_PLAN_LORA || m == GM_PLAN_QLORA ? (unsigned)m : 0;
                        s.serve = m == GM_PLAN_SERVE;
                        s.seq = seqs[si];
                        s.batch = 1;
                        if (r->adapt)
                            r->adapt(&s, impls[i]);
                        int rc = gm_bench_resuming(b) ? 0 : fn(b, worker, r, &s, impls[i], (gm_pattern_kind)pat);
                        char label[96];
                        snprintf(label, sizeof label, "oom %s %s %s%s s=%llu", r->name, impls[i],
                                 gm_precision_name(s.prec), gm_mode_label(&s), (unsigned long long)s.seq);
                        if (gm_bench_point_finished(b, rc, label) != 0)
                            return -1;
                    }
        }
    }
    return count;
}

/* Fragmentation after filling `fill` of free memory with fragments and
 * freeing --frag-free of them; variant "fill-NN%". */
static int fragmentation(gm_bench *b, gm_worker *w, double fill)
{
    gm_probe_result r;
    gm_worker_fragment(w, fill, &r);
    char variant[24];
    snprintf(variant, sizeof variant, "fill-%.0f%%", fill * 100);
    gm_row row = {.suite = "oom", .workload = "alloc", .variant = variant, .pattern = "fragmented",
                  .metric = "fragmentation", .unit = "ratio"};
    if (r.outcome == GM_PROBE_FAILED)
        return emit_failed_probe(b, row, &r);
    if (r.outcome != GM_PROBE_FITS)
        return emit_lost_probe(b, row, &r);
    double free_b = r.stats[0];
    char note[300], lb[32], fb[32], hb[32];
    int len = snprintf(note, sizeof note, "largest block %s of %s free, with %.0f fragments holding %s",
                       gm_format_size(r.value, lb, sizeof lb), gm_format_size((uint64_t)free_b, fb, sizeof fb),
                       r.stats[2], gm_format_size((uint64_t)r.stats[1], hb, sizeof hb));
    /* A fill the device refused before its target is no fill at this level. */
    if (r.stats[3] < r.stats[4] && len > 0 && (size_t)len < sizeof note) {
        char made[32], aim[32];
        snprintf(note + len, sizeof note - (size_t)len, "; the fill stopped at %s of the %s it aimed at",
                 gm_format_size((uint64_t)r.stats[3], made, sizeof made),
                 gm_format_size((uint64_t)r.stats[4], aim, sizeof aim));
    }
    /* External fragmentation: the share of free memory no single block can have
     * (to 1MiB: the search's resolution). */
    double frag = free_b > 0 ? 1.0 - (double)r.value / free_b : 0.0;
    gm_row block = row;
    block.bytes = r.value;
    gm_row_single(&block, "largest_free_block", "bytes", (double)r.value);
    int rc = gm_bench_emit(b, &block, NULL, 0);
    if (rc == 0) {
        gm_row v = row;
        gm_row_single(&v, "fragmentation", "ratio", frag < 0 ? 0 : frag);
        v.note = note;
        rc = gm_bench_emit(b, &v, NULL, 0);
    }
    return rc;
}

static const double fill_levels[] = {0.0, 0.5, 0.9};
static const gm_pattern_kind latency_kinds[] = {GM_PATTERN_PER_TENSOR, GM_PATTERN_POOL, GM_PATTERN_ASYNC_POOL};
#define N_LATENCY_PROBES (3 * 3)

static int allocator_latency(gm_bench *b, gm_worker *w, gm_pattern_kind kind, double fill)
{
    gm_probe_result r;
    gm_worker_latency(w, kind, fill, &r);
    char variant[24];
    snprintf(variant, sizeof variant, "fill-%.0f%%", fill * 100);
    gm_row row = {.suite = "oom", .workload = "allocator", .variant = variant, .pattern = gm_pattern_names[kind],
                  .metric = "alloc_latency_p50", .unit = "us"};
    if (r.outcome == GM_PROBE_FAILED)
        return emit_failed_probe(b, row, &r);
    if (r.outcome != GM_PROBE_FITS)
        return emit_lost_probe(b, row, &r);
    static const char *const metrics[] = {"alloc_latency_p50", "alloc_latency_p99", "free_latency_p50",
                                          "free_latency_p99"};
    int rc = 0;
    for (int i = 0; i + 5 <= r.n_stats && rc == 0; i += 5)
        for (int m = 0; m < 4 && rc == 0; m++) {
            gm_row v = row;
            v.bytes = (uint64_t)r.stats[i];
            gm_row_single(&v, metrics[m], "us", r.stats[i + 1 + m]);
            v.reps = 25;
            rc = gm_bench_emit(b, &v, NULL, 0);
        }
    if (rc == 0 && r.note[0]) {     /* the sizes that did not fit at this fill level */
        gm_row v = row;
        v.status = GM_ROW_OOM;
        v.note = r.note;
        rc = gm_bench_emit(b, &v, NULL, 0);
    }
    return rc;
}

/* Fragmentation is measured at half, all and halfway past --frag-fill
 * (25%, 50%, 75% by default): a curve against fill level. At a fill of
 * 100%, which nothing is past, at 50%, 75% and 100%. */
#define N_FRAG_FILLS 3
static double frag_fill_level(const gm_bench *b, int k)
{
    double f = b->opts->frag_fill;
    if (f >= 1.0)
        return k == 0 ? 0.5 : k == 1 ? 0.75 : 1.0;
    return k == 0 ? f / 2 : k == 1 ? f : (1 + f) / 2;
}

const char *const gm_oom_part_names[] = {"alloc", "fragmentation", "allocator", "batch"};

static bool measures(const gm_bench *b, gm_oom_part part) { return b->opts->oom_parts & (1u << part); }

static int oom_count(gm_bench *b)
{
    return (measures(b, GM_OOM_ALLOC) ? 2 : 0) + (measures(b, GM_OOM_FRAGMENTATION) ? N_FRAG_FILLS : 0) +
           (measures(b, GM_OOM_ALLOCATOR) ? N_LATENCY_PROBES : 0) +
           (measures(b, GM_OOM_BATCH) ? each_search(b, NULL, NULL) : 0);
}

static int oom_run(gm_bench *b)
{
    /* The searching process lets go of the device (its context would take
     * memory from the probes) and takes it back at the end. */
    gm_device *dev = b->dev;
    uint64_t limit = dev->mem_limit, peak = dev->peak_bytes;
    gm_device_close(dev);
    gm_worker *w = gm_worker_new(b);
    /* A resumed run passes the points it finished without their work. */
    int rc = !w ? -1 : 0;
    if (rc == 0 && measures(b, GM_OOM_ALLOC)) {
        rc = gm_bench_resuming(b) ? 0 : largest_alloc(b, w);
        gm_bench_point_done(b, "oom largest allocation");
        if (rc == 0 && !b->device_lost) {
            rc = gm_bench_resuming(b) ? 0 : largest_total(b, w);
            gm_bench_point_done(b, "oom largest total");
        }
    }
    for (int k = 0; k < N_FRAG_FILLS && measures(b, GM_OOM_FRAGMENTATION) && rc == 0 && !b->device_lost; k++) {
        rc = gm_bench_resuming(b) ? 0 : fragmentation(b, w, frag_fill_level(b, k));
        gm_bench_point_done(b, "oom fragmentation");
    }
    for (int k = 0; k < 3 && measures(b, GM_OOM_ALLOCATOR) && rc == 0 && !b->device_lost; k++)
        for (int f = 0; f < 3 && rc == 0 && !b->device_lost; f++) {
            rc = gm_bench_resuming(b) ? 0 : allocator_latency(b, w, latency_kinds[k], fill_levels[f]);
            gm_bench_point_done(b, "oom allocator latency");
        }
    if (measures(b, GM_OOM_BATCH) && rc == 0 && !b->device_lost)
        rc = each_search(b, w, max_batch) < 0 ? -1 : 0;
    gm_worker_free(w);
    if (gm_device_open(dev, dev->backend, dev->index) != GM_OK) {
        b->device_lost = true;
        snprintf(b->error, sizeof b->error, "the device could not be opened again: %s", dev->err.msg);
    }
    gm_device_set_limit(dev, limit);
    dev->peak_bytes = peak;          /* the run's peak in this process, across the reopening */
    return gm_bench_suite_end(b, rc);
}

const gm_suite gm_suite_oom = {
    .name = "oom",
    .summary = "largest allocation, largest total, and the largest batch of each workload",
    .count_points = oom_count,
    .run = oom_run,
};
