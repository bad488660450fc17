/*
 * The stream suite: read, write, copy, scale, add, triad and dot over array
 * sizes, in every storage precision and access pattern. Each timed
 * repetition's output is checked whole on the device (stream_verify in
 * kernels/stream.cl; for read and dot, their partial sums against a
 * second run's) and read back and checked against a CPU reference
 * (bench/stream/check.c: the sum, or every element of small arrays and
 * samples of large ones); a wrong output becomes a `mismatch` row, never
 * a bandwidth. The device check's time is a row of its own
 * (`verify_time`), outside the timed region.
 */
#include "bench/bench.h"
#include "bench/output_fault.h"
#include "lib/precision.h"
#include "lib/stats.h"
#include "bench/stream/check.h"
#include "lib/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const gm_stream_kernel_names[GM_STREAM_KERNEL_COUNT] = {
    "read", "write", "copy", "scale", "add", "triad", "dot",
};

enum { K_READ, K_WRITE, K_COPY, K_SCALE, K_ADD, K_TRIAD, K_DOT };

static const struct {
    int inputs;        /* how many of a, b it reads */
    int reduces;       /* writes per-group partial sums instead of c */
    int arrays_moved;  /* arrays read + written, for bytes moved */
} kinfo[GM_STREAM_KERNEL_COUNT] = {
    [K_READ] = {1, 1, 1},  [K_WRITE] = {0, 0, 1}, [K_COPY] = {1, 0, 2}, [K_SCALE] = {1, 0, 2},
    [K_ADD] = {2, 0, 3},   [K_TRIAD] = {2, 0, 3}, [K_DOT] = {2, 1, 2},
};

#define N_ACCESS 2
static const char *const access_names[N_ACCESS] = {"grid", "chunked"};

typedef struct {
    gm_bench *b;
    gm_device *dev;
    size_t bytes;                       /* per array */
    gm_buffer a, bb, c, partials;       /* device */
    gm_buffer out;                      /* host: read-back of c or partials, the first rep's */
    gm_buffer later;                    /* host: the later reps' read-back (--reps > 1) */
    gm_buffer values;                   /* device: the patterns' tables (stream_data.values) */
    gm_buffer verdict;                  /* device: stream_verify's count and first index a group */
    gm_buffer recheck;                  /* device: read and dot's partials of the second run */
    void *verdict_host, *recheck_host;  /* their read-backs */
    uint64_t measured_bytes;            /* free memory taken by a, b, c (0: unknown) */
    stream_data data;                   /* host copies of a and b, and reference sums */
    gm_program *prog[GM_PREC_COUNT][N_ACCESS];
    gm_kernel *kern[GM_PREC_COUNT][N_ACCESS][GM_STREAM_KERNEL_COUNT];
    gm_kernel *verify[GM_PREC_COUNT][N_ACCESS];
} stream_state;

/* Sizes to sweep when none are given: from 4MiB to 8x the last-level
 * cache (at least 256MiB), with three arrays fitting in a quarter of the
 * device's memory (or the cap). The largest reaches 4x the cache wherever
 * those bounds allow it (the report's device-memory bandwidth needs it). */
static int default_sizes(const gm_device *dev, uint64_t **out, size_t *n)
{
    uint64_t top = dev->info.llc_bytes ? dev->info.llc_bytes * 8 : 256u << 20;
    if (top < (256u << 20))
        top = 256u << 20;
    uint64_t mem = dev->mem_limit ? dev->mem_limit : dev->info.total_mem;
    if (mem && top > mem / 12)
        top = mem / 12;
    if (dev->info.max_alloc && top > dev->info.max_alloc)
        top = dev->info.max_alloc;
    size_t count = 0;
    uint64_t *v = malloc(16 * sizeof *v);
    if (!v)
        return -1;
    for (uint64_t s = 4u << 20; s <= top && count < 16; s *= 4)
        v[count++] = s;
    uint64_t device_memory = dev->info.llc_bytes * 4;
    if (count && v[count - 1] < device_memory && top >= device_memory)
        v[count++] = top;
    if (count == 0)
        v[count++] = 1u << 20;
    *out = v;
    *n = count;
    return 0;
}

static int access_list(const gm_bench *b, int *list)
{
    switch (b->opts->access) {
    case GM_ACCESS_GRID: list[0] = 0; return 1;
    case GM_ACCESS_CHUNKED: list[0] = 1; return 1;
    case GM_ACCESS_BOTH: list[0] = 0; list[1] = 1; return 2;
    case GM_ACCESS_AUTO: break;
    }
    /* GPUs want adjacent threads on adjacent elements; CPU cores want
     * each a contiguous range of their own. */
    list[0] = gm_device_prefers_chunked(b->dev) ? 1 : 0;
    return 1;
}

static gm_status build_programs(stream_state *s, gm_precision p, int access)
{
    if (s->prog[p][access])
        return GM_OK;
    char variant[64];
    gm_kernel_variant(p, access == 1, variant, sizeof variant);
    gm_device *dev = s->dev;
    gm_status st = dev->backend->program_build(dev, "stream", variant, NULL, &s->prog[p][access]);
    for (int k = 0; st == GM_OK && k < GM_STREAM_KERNEL_COUNT; k++) {
        char name[32];
        snprintf(name, sizeof name, "stream_%s", gm_stream_kernel_names[k]);
        st = dev->backend->kernel_get(dev, s->prog[p][access], name, &s->kern[p][access][k]);
    }
    if (st == GM_OK)
        st = dev->backend->kernel_get(dev, s->prog[p][access], "stream_verify", &s->verify[p][access]);
    return st;
}

static void release_programs(stream_state *s)
{
    for (int p = 0; p < GM_PREC_COUNT; p++)
        for (int a = 0; a < N_ACCESS; a++) {
            for (int k = 0; k < GM_STREAM_KERNEL_COUNT; k++)
                if (s->kern[p][a][k])
                    s->dev->backend->kernel_release(s->dev, s->kern[p][a][k]);
            if (s->verify[p][a])
                s->dev->backend->kernel_release(s->dev, s->verify[p][a]);
            if (s->prog[p][a])
                s->dev->backend->program_release(s->dev, s->prog[p][a]);
        }
}

static void free_arrays(stream_state *s)
{
    gm_device_free(s->dev, &s->a);
    gm_device_free(s->dev, &s->bb);
    gm_device_free(s->dev, &s->c);
    gm_device_free(s->dev, &s->partials);
    gm_device_free(s->dev, &s->out);
    gm_device_free(s->dev, &s->later);
    gm_device_free(s->dev, &s->values);
    gm_device_free(s->dev, &s->verdict);
    gm_device_free(s->dev, &s->recheck);
    free(s->verdict_host);
    free(s->recheck_host);
    s->verdict_host = s->recheck_host = NULL;
    stream_data_release(&s->data);
}

static gm_status alloc_arrays(stream_state *s, size_t bytes)
{
    gm_status st = GM_OK;
    /* Measured from the backend's own report, not through the cap. */
    uint64_t free_before = 0, free_after = 0, total;
    bool known = s->dev->backend->mem_info(s->dev, &free_before, &total) == GM_OK;
    gm_buffer *bufs[] = {&s->a, &s->bb, &s->c};
    for (int i = 0; i < 3 && st == GM_OK; i++)
        st = gm_device_alloc(s->dev, GM_MEM_DEVICE, bytes, bufs[i]);
    known = known && st == GM_OK && s->dev->backend->mem_info(s->dev, &free_after, &total) == GM_OK;
    s->measured_bytes = known && free_before > free_after ? free_before - free_after : 0;
    /* Every rep reads its output back here: into page-locked memory where
     * the device copies by DMA (two to four times the pageable copy's
     * speed on a GPU, for arrays up to a card's GiBs a rep), else, or
     * where that is refused, ordinary host memory (a CPU device's memory
     * is the host's). */
    if (st == GM_OK && (s->dev->info.type == GM_DEV_CPU
                        || gm_device_alloc(s->dev, GM_MEM_PINNED, bytes, &s->out) != GM_OK))
        st = gm_device_alloc(s->dev, GM_MEM_HOST, bytes, &s->out);
    if (st == GM_OK && s->b->opts->reps > 1)
        st = gm_device_alloc(s->dev, s->out.kind, bytes, &s->later);
    if (st == GM_OK)
        st = gm_device_alloc(s->dev, GM_MEM_DEVICE, 2 * STREAM_PATTERN_TABLE * sizeof(float), &s->values);
    if (st != GM_OK)
        free_arrays(s);
    s->bytes = bytes;   /* the size attempted: failure rows name it too */
    return st;
}

/* The row fields shared by every row of one point. */
static gm_row point_row(const stream_state *s, int k, gm_precision p, int access)
{
    gm_row r = {0};
    r.suite = "stream";
    r.workload = gm_stream_kernel_names[k];
    r.variant = access_names[access];
    r.pattern = "per-tensor";
    r.precision = gm_precision_name(p);
    r.bytes = s->bytes;
    r.model_bytes = 3 * (uint64_t)s->bytes;
    r.measured_bytes = s->measured_bytes;
    r.reps = s->b->opts->reps;
    return r;
}

static gm_arg buf_arg(const gm_buffer *buf) { return (gm_arg){GM_ARG_BUFFER, buf, NULL, 0}; }
static gm_arg val_arg(const void *v, size_t size) { return (gm_arg){GM_ARG_VALUE, NULL, v, size}; }

/* Whether the kernels that write an array store past the caches (see
 * gm_store16_nt in kernels/stream.cl): where the arrays a kernel moves do not
 * fit in the last-level cache together, or its size is unknown. Below it
 * the stores stay in the cache, whose bandwidth the small sizes measure. */
static unsigned streaming_stores(const gm_device *dev, uint64_t bytes_moved)
{
    return dev->info.llc_bytes == 0 || bytes_moved > dev->info.llc_bytes;
}

static gm_status launch(stream_state *s, int k, gm_precision p, int access, size_t n, size_t global,
                        size_t local)
{
    const unsigned long n_arg = n;
    const float scalar = STREAM_SCALAR, scale = STREAM_INT8_SCALE;
    const unsigned streaming = streaming_stores(s->dev, (uint64_t)kinfo[k].arrays_moved * s->bytes);
    gm_arg args[7];
    int na = 0;
    if (k != K_WRITE)
        args[na++] = buf_arg(&s->a);
    if (kinfo[k].inputs == 2)
        args[na++] = buf_arg(&s->bb);
    args[na++] = buf_arg(kinfo[k].reduces ? &s->partials : &s->c);
    args[na++] = val_arg(&n_arg, sizeof n_arg);
    if (k == K_SCALE || k == K_TRIAD)
        args[na++] = val_arg(&scalar, sizeof scalar);
    if (k != K_COPY)
        args[na++] = val_arg(&scale, sizeof scale);
    if (!kinfo[k].reduces)
        args[na++] = val_arg(&streaming, sizeof streaming);
    return s->dev->backend->launch(s->dev, 0, s->kern[p][access][k], global, local, args, na);
}

/* A timed rep of a short kernel launches it this many times back to back
 * (at most STREAM_MAX_LAUNCHES) so that the rep lasts about
 * STREAM_REP_TARGET_MS: each launch's fixed cost on the device (a few µs
 * on a GPU: the grid's start and drain) would otherwise cap small arrays'
 * figures below the cache's bandwidth. Every kernel writes only what it
 * does not read, so a repeated launch leaves the same output to verify. The
 * cap keeps a rep's launches within what a driver queues without blocking
 * while the queue is held (bench.h). */
#define STREAM_REP_TARGET_MS 0.25
#define STREAM_MAX_LAUNCHES 64u

/* The launches a rep needs for one launch that took once_ms. */
static unsigned launches_per_rep(double once_ms)
{
    if (!(once_ms > 0) || once_ms >= STREAM_REP_TARGET_MS)
        return 1;
    double n = ceil(STREAM_REP_TARGET_MS / once_ms);
    return n >= STREAM_MAX_LAUNCHES ? STREAM_MAX_LAUNCHES : (unsigned)n;
}

/* The launches of a stream kernel one rep makes, as gm_time_work and
 * gm_time_on_queue enqueue them. */
typedef struct {
    stream_state *s;
    int k, access;
    gm_precision p;
    size_t n, global, local;
    unsigned launches;
} stream_launch;

static gm_status enqueue_launch(void *ctx)
{
    stream_launch *l = ctx;
    gm_status st = GM_OK;
    for (unsigned i = 0; i < l->launches && st == GM_OK; i++)
        st = launch(l->s, l->k, l->p, l->access, l->n, l->global, l->local);
    return st;
}

/*
 * Test-only fault (GPUMEM_FAULT=corrupt-output | flip-output-bit, see
 * bench/output_fault.h): strikes one element of the rep's output on the
 * device, after the timed launches and before any check. The element is
 * drawn from the seed, the point (kernel, precision, size) and the rep;
 * *struck receives it. For read and dot the output is their partial sums
 * (floats, one a work group): a fault there is a fault in the sum they
 * stand for. Every bit of either output is visible: the elements are
 * compared bit for bit (stream_verify), the partials bit for bit with a
 * second run's (reduction_recheck), so low_bit is 0 for both. The CPU's
 * sum check alone, a tolerance of fp32 rounding over the whole sum, would
 * see only a flip that moves one partial by more than that (high exponent
 * bits, mostly).
 */
static gm_status inject_fault(stream_state *s, int k, gm_precision p, size_t n, size_t groups, unsigned rep,
                              size_t *struck)
{
    char point[96];
    snprintf(point, sizeof point, "stream %s %s %zu", gm_stream_kernel_names[k], gm_precision_name(p), s->bytes);
    uint64_t salt = gm_output_fault_salt(point);
    if (kinfo[k].reduces)
        return gm_output_fault_strike(&s->b->output_fault, s->dev, &s->partials, 0, groups, sizeof(float), salt,
                                      rep, 0, struck);
    return gm_output_fault_strike(&s->b->output_fault, s->dev, &s->c, 0, n, gm_precision_size(p), salt, rep, 0,
                                  struck);
}

/* The bytes of kernel k's output: c, or read and dot's partial sums. */
static size_t output_bytes(const stream_state *s, int k, size_t groups)
{
    return kinfo[k].reduces ? groups * sizeof(float) : s->bytes;
}

static gm_status read_back(stream_state *s, int k, size_t groups, gm_buffer *dst)
{
    const gm_buffer *src = kinfo[k].reduces ? &s->partials : &s->c;
    return s->dev->backend->copy(s->dev, 0, dst, 0, src, 0, output_bytes(s, k, groups), false);
}

/* The device's whole-output check of one rep. */
typedef struct {
    uint64_t wrong;     /* elements (read, dot: partial sums) found wrong */
    uint64_t first;     /* the least index of one; meaningful where wrong > 0 */
    uint64_t of;        /* elements (partial sums) checked */
    double ms;          /* its device time */
} device_verdict;

static gm_status enqueue_verify(void *ctx)
{
    const stream_launch *v = ctx;   /* its geometry; launches unused */
    stream_state *s = v->s;
    const unsigned long n_arg = v->n;
    const int kernel = v->k;
    const float scalar = STREAM_SCALAR, scale = STREAM_INT8_SCALE;
    gm_arg args[] = {buf_arg(&s->c), buf_arg(&s->values), buf_arg(&s->verdict), val_arg(&n_arg, sizeof n_arg),
                     val_arg(&kernel, sizeof kernel), val_arg(&scalar, sizeof scalar), val_arg(&scale, sizeof scale)};
    return s->dev->backend->launch(s->dev, 0, s->verify[v->p][v->access], v->global, v->local, args,
                                   (int)(sizeof args / sizeof args[0]));
}

/* read or dot run once more into s->recheck (same geometry, same order of
 * additions: the same bits wherever nothing went wrong). */
static gm_status enqueue_recheck(void *ctx)
{
    const stream_launch *v = ctx;   /* its geometry; launches unused */
    stream_state *s = v->s;
    const unsigned long n_arg = v->n;
    const float scale = STREAM_INT8_SCALE;
    gm_arg args[5];
    int na = 0;
    args[na++] = buf_arg(&s->a);
    if (v->k == K_DOT)
        args[na++] = buf_arg(&s->bb);
    args[na++] = buf_arg(&s->recheck);
    args[na++] = val_arg(&n_arg, sizeof n_arg);
    args[na++] = val_arg(&scale, sizeof scale);
    return s->dev->backend->launch(s->dev, 0, s->kern[v->p][v->access][v->k], v->global, v->local, args, na);
}

/* Grows a device buffer (and its host read-back) to hold bytes. */
static gm_status ensure_buffer(stream_state *s, gm_buffer *dev_buf, void **host, size_t bytes)
{
    if (dev_buf->bytes >= bytes && *host)
        return GM_OK;
    gm_device_free(s->dev, dev_buf);
    free(*host);
    *host = malloc(bytes);
    if (!*host)
        return GM_ERR_OOM;
    return gm_device_alloc(s->dev, GM_MEM_DEVICE, bytes, dev_buf);
}

/* Runs one untimed check kernel (enqueue, over l's geometry) that writes `bytes` into
 * dev_buf (grown as needed, with its host copy), and reads them back into
 * *host; *ms is the kernel's device time. */
static gm_status run_check(stream_state *s, gm_buffer *dev_buf, void **host, size_t bytes,
                           gm_status (*enqueue)(void *ctx), stream_launch *l, double *ms)
{
    gm_status st = ensure_buffer(s, dev_buf, host, bytes);
    if (st == GM_OK)
        st = gm_time_work(s->dev, 0, enqueue, l, ms);
    gm_buffer copy = {.kind = GM_MEM_HOST, .bytes = bytes, .host = *host};
    if (st == GM_OK)
        st = s->dev->backend->copy(s->dev, 0, &copy, 0, dev_buf, 0, bytes, false);
    return st;
}

/*
 * Checks the whole of the rep's output on the device: stream_verify over
 * every element of c, or, for read and dot, a second run of the kernel
 * whose partial sums must equal the timed run's bit for bit (the host
 * compares them, a few per compute unit, with the timed run's read back
 * in s->out: call it after read_back). Not part of the timed region;
 * v->ms is the device time of the check's kernel.
 */
static gm_status device_verify(stream_state *s, const stream_launch *l, size_t groups, device_verdict *v)
{
    stream_launch vl = *l;
    *v = (device_verdict){0, 0, 0, 0.0};
    gm_status st;
    if (kinfo[l->k].reduces) {
        st = run_check(s, &s->recheck, &s->recheck_host, groups * sizeof(float), enqueue_recheck, &vl, &v->ms);
        v->of = groups;   /* s->out holds the timed run's, read back */
        for (size_t g = 0; st == GM_OK && g < groups; g++)
            if (memcmp((const float *)s->out.host + g, (const float *)s->recheck_host + g, sizeof(float)) != 0
                && v->wrong++ == 0)
                v->first = g;
        return st;
    }
    st = run_check(s, &s->verdict, &s->verdict_host, 2 * groups * sizeof(uint64_t), enqueue_verify, &vl, &v->ms);
    v->of = l->n;
    v->first = l->n;
    const uint64_t *r = s->verdict_host;
    for (size_t g = 0; st == GM_OK && g < groups; g++) {
        v->wrong += r[2 * g];
        if (r[2 * g] && r[2 * g + 1] < v->first)
            v->first = r[2 * g + 1];
    }
    return st;
}

/*
 * The note of a rep the device found wrong: the first wrong element with
 * its expected value (elements), or the first partial sum that differs
 * from the second run's, then how many; the CPU's own finding, where it
 * has one, follows. out holds the read-back output.
 */
static void device_note(const stream_state *s, int k, const device_verdict *v, bool host_wrong,
                        const char *host_note, char *note, size_t len)
{
    char first[160];
    if (kinfo[k].reduces)
        snprintf(first, sizeof first, "partial sum %llu: %.9g, a second run %.9g", (unsigned long long)v->first,
                 ((const float *)s->out.host)[v->first], ((const float *)s->recheck_host)[v->first]);
    else
        stream_element_note(&s->data, k, s->out.host, (size_t)v->first, first, sizeof first);
    snprintf(note, len, "%.159s; %llu of %llu %s wrong (checked whole on the device)%s%.159s", first,
             (unsigned long long)v->wrong, (unsigned long long)v->of, kinfo[k].reduces ? "partial sums" : "elements",
             host_wrong ? "; CPU check: " : "", host_wrong ? host_note : "");
}

/*
 * A rep after the first, read back whole into s->later, compared bit for
 * bit with the first rep's output in s->out, which the device checked
 * whole (every rep computes the same output from the same inputs). Counts
 * the elements (partial sums) that differ and the first; where one does,
 * writes the note.
 */
static uint64_t compare_with_first(const stream_state *s, int k, size_t n, size_t groups, char *note, size_t len)
{
    const size_t bytes = output_bytes(s, k, groups);
    if (memcmp(s->later.host, s->out.host, bytes) == 0)
        return 0;
    const size_t es = kinfo[k].reduces ? sizeof(float) : bytes / n, count = bytes / es;
    const unsigned char *now = s->later.host, *first = s->out.host;
    uint64_t differ = 0;
    size_t at = 0;
    for (size_t i = 0; i < count; i++)
        if (memcmp(now + i * es, first + i * es, es) != 0 && differ++ == 0)
            at = i;
    char what[160];
    if (kinfo[k].reduces)
        snprintf(what, sizeof what, "partial sum %zu: %.9g, the first rep's %.9g", at, ((const float *)now)[at],
                 ((const float *)first)[at]);
    else
        stream_element_note(&s->data, k, now, at, what, sizeof what);
    snprintf(note, len, "%s; %llu of %zu %s differ from the first rep's output (checked whole on the device)", what,
             (unsigned long long)differ, count, kinfo[k].reduces ? "partial sums" : "elements");
    return differ;
}

static int emit_failure(stream_state *s, int k, gm_precision p, int access, gm_row_status status,
                        const char *note)
{
    gm_row r = point_row(s, k, p, access);
    r.metric = "bandwidth";
    r.unit = "GB/s";
    r.status = status;
    r.note = note;
    r.reps = 0;
    return gm_bench_emit(s->b, &r, NULL, 0);
}

/* Measures one (kernel, precision, access) point and writes its rows. */
static int run_point(stream_state *s, int k, gm_precision p, int access)
{
    const gm_bench_opts *o = s->b->opts;
    size_t n = s->bytes / gm_precision_size(p), global, local;
    gm_stream_geometry(s->dev, access == 1, n / (16 / gm_precision_size(p)), &global, &local);
    size_t groups = global / local;
    gm_status st = GM_OK;
    if (kinfo[k].reduces && s->partials.bytes < groups * sizeof(float)) {
        gm_device_free(s->dev, &s->partials);
        st = gm_device_alloc(s->dev, GM_MEM_DEVICE, groups * sizeof(float), &s->partials);
    }
    double *ms = calloc(o->reps, sizeof *ms);
    double *gbs = calloc(o->reps, sizeof *gbs);
    double *verify_ms = calloc(o->reps, sizeof *verify_ms);
    char note[512] = "";
    bool wrong = false;
    stream_launch one = {s, k, access, p, n, global, local, 1};
    /* Warm-up unheld: a first launch may load code, which must not wait
     * behind a held queue (bench.h). Then one launch, timed, sets the
     * launches of every rep: held after a warm-up, unheld where it is the
     * first (--warmup 0). */
    for (unsigned w = 0; st == GM_OK && w < o->warmup && ms; w++)
        st = gm_time_on_queue(s->dev, 0, enqueue_launch, &one, &ms[0]);
    if (st == GM_OK && ms)
        st = (o->warmup ? gm_time_work : gm_time_on_queue)(s->dev, 0, enqueue_launch, &one, &ms[0]);
    if (st == GM_OK && ms)
        one.launches = launches_per_rep(ms[0]);
    /* The first rep's output is checked whole on the device (its time:
     * verify_ms[0], device events); each later rep's is read back whole
     * and compared with it on the host (verify_ms[r], the host's clock).
     * The CPU's sampled check (check.c) runs on every rep besides. */
    for (unsigned r = 0; st == GM_OK && r < o->reps && ms && gbs && verify_ms && !wrong; r++) {
        st = gm_time_work(s->dev, 0, enqueue_launch, &one, &ms[r]);
        if (st == GM_OK && s->b->output_fault.kind != GM_OUTPUT_FAULT_NONE)
            st = inject_fault(s, k, p, n, groups, r, NULL);
        gm_buffer *dst = r == 0 ? &s->out : &s->later;
        if (st == GM_OK)
            st = read_back(s, k, groups, dst);
        device_verdict dv = {0, 0, 0, 0.0};
        uint64_t differ = 0;
        char whole_note[sizeof note] = "";
        if (st == GM_OK && r == 0)
            st = device_verify(s, &one, groups, &dv);
        if (st == GM_OK && r > 0) {
            double t0 = gm_now();
            differ = compare_with_first(s, k, n, groups, whole_note, sizeof whole_note);
            dv.ms = (gm_now() - t0) * 1e3;
        }
        verify_ms[r] = dv.ms;
        bool host_wrong = false;
        if (st == GM_OK)
            host_wrong = !stream_verify(&s->data, k, p, dst->host, n, groups, global, r, note, sizeof note);
        if (st == GM_OK && dv.wrong) {
            char host_note[sizeof note];
            snprintf(host_note, sizeof host_note, "%s", note);
            device_note(s, k, &dv, host_wrong, host_note, note, sizeof note);
        } else if (st == GM_OK && differ) {
            snprintf(note, sizeof note, "%s", whole_note);
        }
        wrong = st == GM_OK && (dv.wrong > 0 || differ > 0 || host_wrong);
        ms[r] /= one.launches;      /* the time of one pass */
        double bytes_moved = (double)kinfo[k].arrays_moved * (double)s->bytes;
        gbs[r] = ms[r] > 0 ? bytes_moved / (ms[r] * 1e6) : 0;
    }
    int rc;
    if (!ms || !gbs || !verify_ms) {
        rc = emit_failure(s, k, p, access, GM_ROW_ERROR, "out of host memory");
    } else if (st != GM_OK) {
        if (st == GM_ERR_DEVICE_LOST)
            s->b->device_lost = true;
        rc = emit_failure(s, k, p, access, gm_row_status_of(st), s->dev->err.msg);
    } else if (wrong) {
        rc = emit_failure(s, k, p, access, GM_ROW_MISMATCH, note);
    } else {
        gm_row r = point_row(s, k, p, access);
        char launches_note[80];
        snprintf(launches_note, sizeof launches_note, "%u" GM_LAUNCHES_NOTE, one.launches);
        r.note = one.launches > 1 ? launches_note : NULL;
        gm_stats stats;
        gm_stats_compute(gbs, o->reps, &stats);
        r.metric = "bandwidth";
        r.unit = "GB/s";
        r.has_value = true;
        r.value = stats.median;
        r.min = stats.min;
        r.max = stats.max;
        r.stdev = stats.stdev;
        rc = gm_bench_emit(s->b, &r, gbs, o->reps);
        gm_stats_compute(ms, o->reps, &stats);
        r.metric = "time";
        r.unit = "ms";
        r.value = stats.median;
        r.min = stats.min;
        r.max = stats.max;
        r.stdev = stats.stdev;
        if (rc == 0)
            rc = gm_bench_emit(s->b, &r, ms, o->reps);
        /* The whole-output check's time (not in the time above: it runs
         * after the timed launches): the first rep's, on the device; the
         * note gives the later reps' comparison with it on the host. */
        char compare_note[120];
        if (o->reps > 1) {
            gm_stats_compute(verify_ms + 1, o->reps - 1, &stats);
            snprintf(compare_note, sizeof compare_note,
                     "first rep checked on the device; reps 2-%u compared whole with it on the host: %.3g ms (median)",
                     o->reps, stats.median);
        }
        r.metric = "verify_time";
        r.note = o->reps > 1 ? compare_note : NULL;
        r.reps = 1;
        r.value = r.min = r.max = verify_ms[0];
        r.stdev = 0;
        if (rc == 0)
            rc = gm_bench_emit(s->b, &r, verify_ms, 1);
    }
    free(ms);
    free(gbs);
    free(verify_ms);
    return rc;
}

static int count_selected(unsigned mask)
{
    return __builtin_popcount(mask);
}

static int stream_count(gm_bench *b)
{
    uint64_t *sizes = NULL;
    size_t n_sizes = b->opts->n_sizes;
    if (!b->opts->sizes && default_sizes(b->dev, &sizes, &n_sizes) == 0)
        free(sizes);
    int accesses[N_ACCESS];
    return (int)n_sizes * count_selected(b->opts->precisions) * access_list(b, accesses)
           * count_selected(b->opts->kernels);
}

/* Emits the same failure row for every point of one size. */
static int fail_size(stream_state *s, const int *accesses, int n_access, gm_row_status status,
                     const char *note)
{
    for (int p = 0; p < GM_PREC_COUNT; p++)
        for (int a = 0; a < n_access; a++)
            for (int k = 0; k < GM_STREAM_KERNEL_COUNT; k++) {
                if (!(s->b->opts->precisions & (1u << p)) || !(s->b->opts->kernels & (1u << k)))
                    continue;
                if (emit_failure(s, k, (gm_precision)p, accesses[a], status, note) != 0)
                    return -1;
                gm_bench_point_done(s->b, "stream");
            }
    return 0;
}

static int run_size(stream_state *s, size_t bytes, const int *accesses, int n_access)
{
    char label[96], sz[32];
    gm_format_size(bytes, sz, sizeof sz);
    gm_status st = alloc_arrays(s, bytes);
    if (st != GM_OK) {
        char note[300];
        snprintf(note, sizeof note, "%s arrays: %s", sz, s->dev->err.msg);
        return fail_size(s, accesses, n_access, gm_row_status_of(st), note);
    }
    int rc = 0;
    /* Each round starts at another precision: a neighbour's burst, or
     * what the previous points leave behind, does not always fall on the
     * same one (precisions are compared with each other's bandwidth). */
    for (int i = 0; i < GM_PREC_COUNT && rc == 0; i++) {
        int p = (i + s->b->round) % GM_PREC_COUNT;
        if (!(s->b->opts->precisions & (1u << p)))
            continue;
        size_t n = bytes / gm_precision_size((gm_precision)p);
        st = stream_data_init(&s->data, (gm_precision)p, n) ? GM_ERR_OOM : GM_OK;
        gm_buffer ha = {.kind = GM_MEM_HOST, .bytes = bytes, .host = s->data.a};
        gm_buffer hb = {.kind = GM_MEM_HOST, .bytes = bytes, .host = s->data.b};
        if (st == GM_OK)
            st = s->dev->backend->copy(s->dev, 0, &s->a, 0, &ha, 0, bytes, false);
        if (st == GM_OK)
            st = s->dev->backend->copy(s->dev, 0, &s->bb, 0, &hb, 0, bytes, false);
        gm_buffer hv = {.kind = GM_MEM_HOST, .bytes = s->values.bytes, .host = s->data.values};
        if (st == GM_OK)
            st = s->dev->backend->copy(s->dev, 0, &s->values, 0, &hv, 0, s->values.bytes, false);
        for (int a = 0; a < n_access && rc == 0; a++) {
            gm_status bst = st == GM_OK ? build_programs(s, (gm_precision)p, accesses[a]) : st;
            for (int k = 0; k < GM_STREAM_KERNEL_COUNT && rc == 0; k++) {
                if (!(s->b->opts->kernels & (1u << k)))
                    continue;
                if (gm_bench_resuming(s->b))
                    rc = 0;
                else if (bst != GM_OK)
                    rc = emit_failure(s, k, (gm_precision)p, accesses[a], gm_row_status_of(bst), s->dev->err.msg);
                else
                    rc = run_point(s, k, (gm_precision)p, accesses[a]);
                snprintf(label, sizeof label, "stream %s %s %s %s", gm_stream_kernel_names[k],
                         gm_precision_name((gm_precision)p), access_names[accesses[a]], sz);
                rc = gm_bench_point_finished(s->b, rc, label);
            }
        }
        stream_data_release(&s->data);
    }
    free_arrays(s);
    return rc;
}

static int stream_run(gm_bench *b)
{
    stream_state s = {0};
    s.b = b;
    s.dev = b->dev;
    uint64_t *sizes = b->opts->sizes, *owned = NULL;
    size_t n_sizes = b->opts->n_sizes;
    if (!sizes) {
        if (default_sizes(b->dev, &owned, &n_sizes) != 0)
            return -1;
        sizes = owned;
    }
    int accesses[N_ACCESS];
    int n_access = access_list(b, accesses);
    int rc = 0;
    for (size_t i = 0; i < n_sizes && rc == 0; i++)
        rc = run_size(&s, sizes[i], accesses, n_access);
    release_programs(&s);
    free(owned);
    return gm_bench_suite_end(b, rc);
}

const gm_suite gm_suite_stream = {
    .name = "stream",
    .summary = "read, write, copy, scale, add, triad, dot bandwidth over array sizes",
    .count_points = stream_count,
    .run = stream_run,
};
