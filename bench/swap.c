/*
 * The swap suite, transfers: host-to-device, device-to-host and both at
 * once (on two queues), for block sizes from 4KiB up, from pageable and
 * pinned host memory. Every repetition is timed by device events and its
 * payload checked by checksum after the round trip; a corrupted payload is
 * a `mismatch` row. Rows: latency percentiles (p50, p90, p99, max) and
 * bandwidth.
 */
#include "bench.h"
#include "stats.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_REPS 20          /* latency percentiles need a sample */

static const uint64_t default_blocks[] = {4096, 65536, 1u << 20, 16u << 20, 64u << 20};
static const gm_mem_kind host_kinds[] = {GM_MEM_HOST, GM_MEM_PINNED};
enum { H2D, D2H, BIDIR, N_DIRECTIONS };
static const char *const direction_names[N_DIRECTIONS] = {"h2d", "d2h", "bidir"};

static unsigned reps_of(const gm_bench *b) { return b->opts->reps > MIN_REPS ? b->opts->reps : MIN_REPS; }

static void blocks_of(const gm_bench *b, const uint64_t **v, size_t *n)
{
    *v = b->opts->blocks ? b->opts->blocks : default_blocks;
    *n = b->opts->blocks ? b->opts->n_blocks : sizeof default_blocks / sizeof default_blocks[0];
}

static int swap_count(gm_bench *b)
{
    const uint64_t *v;
    size_t n;
    blocks_of(b, &v, &n);
    return (int)n * 2 * N_DIRECTIONS;
}

/* A payload that differs per repetition, and its checksum; both work a
 * word at a time (then byte by byte over the tail). */
static void fill_payload(unsigned char *p, size_t n, unsigned rep)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * (rep + 1);
    size_t words = n / 8;
    for (size_t i = 0; i < words; i++) {
        gm_xorshift(&x);
        memcpy(p + 8 * i, &x, 8);
    }
    for (size_t i = 8 * words; i < n; i++)
        p[i] = (unsigned char)(x >> (8 * (i % 8)));
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull, w;
    size_t words = n / 8;
    for (size_t i = 0; i < words; i++) {
        memcpy(&w, p + 8 * i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (size_t i = 8 * words; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

typedef struct {
    gm_device *dev;
    gm_buffer host_src, host_dst, dev_a, dev_b;   /* dev_b: the second stream's device side */
    size_t bytes;
    int direction;
} transfer;

/* Enqueues the timed copies (async, so both directions overlap). */
static gm_status enqueue_transfer(void *ctx)
{
    transfer *t = ctx;
    const gm_backend *be = t->dev->backend;
    gm_status rc = GM_OK;
    if (t->direction == H2D || t->direction == BIDIR)
        rc = be->copy(t->dev, 0, &t->dev_a, 0, &t->host_src, 0, t->bytes, true);
    if (rc == GM_OK && (t->direction == D2H || t->direction == BIDIR))
        rc = be->copy(t->dev, t->direction == BIDIR ? 1 : 0, &t->host_dst, 0, &t->dev_b, 0, t->bytes, true);
    return rc;
}

/* Times queue 0; for both directions, queue 1 is waited for as well, so
 * the time covers both copies. */
static gm_status timed_transfer(transfer *t, double *ms)
{
    gm_status rc = gm_time_on_queue(t->dev, 0, enqueue_transfer, t, ms);
    if (rc == GM_OK && t->direction == BIDIR) {
        double wall0 = gm_now();
        rc = t->dev->backend->synchronize(t->dev, 1);
        *ms += (gm_now() - wall0) * 1e3;   /* the part of d2h that outlasted h2d */
    }
    return rc;
}

/* After a repetition: what went to the device comes back intact (h2d,
 * read back through dev_a) and what came from it matches what was put
 * there (d2h). */
static gm_status check_round_trip(transfer *t, uint64_t want_up, uint64_t want_down, bool fault, bool *ok)
{
    const gm_backend *be = t->dev->backend;
    gm_status rc = GM_OK;
    *ok = true;
    if (fault)
        rc = gm_corrupt_bytes(t->dev, t->direction == D2H ? &t->dev_b : &t->dev_a, t->bytes / 2, 1);
    if (rc == GM_OK && t->direction != D2H) {
        gm_buffer *scratch = &t->host_dst;
        if (t->direction == BIDIR)
            scratch = &t->host_src;   /* its payload is summed already */
        rc = be->copy(t->dev, 0, scratch, 0, &t->dev_a, 0, t->bytes, false);
        *ok = rc == GM_OK && checksum(scratch->host, t->bytes) == want_up;
    }
    if (rc == GM_OK && *ok && t->direction != H2D) {
        if (fault && t->direction == D2H)
            rc = be->copy(t->dev, 0, &t->host_dst, 0, &t->dev_b, 0, t->bytes, false);
        *ok = rc == GM_OK && checksum(t->host_dst.host, t->bytes) == want_down;
    }
    return rc;
}

static int emit(gm_bench *b, const transfer *t, gm_mem_kind kind, gm_row_status status, const char *note,
                const double *ms, size_t n)
{
    gm_row row = {0};
    row.suite = "swap";
    row.workload = "transfer";
    row.variant = direction_names[t->direction];
    row.pattern = gm_mem_kind_name(kind);
    row.bytes = t->bytes;
    row.model_bytes = t->direction == BIDIR ? 2 * (uint64_t)t->bytes : (uint64_t)t->bytes;
    row.status = status;
    row.note = note;
    if (status != GM_ROW_OK || !ms) {
        row.metric = "latency_p50";
        row.unit = "us";
        return gm_bench_emit(b, &row, NULL, 0);
    }
    double *us = malloc(n * sizeof *us), *gbs = malloc(n * sizeof *gbs);
    if (!us || !gbs) {
        free(us);
        free(gbs);
        row.status = GM_ROW_ERROR;
        row.note = "out of host memory";
        row.metric = "latency_p50";
        row.unit = "us";
        return gm_bench_emit(b, &row, NULL, 0);
    }
    double moved = (double)row.model_bytes;
    for (size_t i = 0; i < n; i++) {
        us[i] = ms[i] * 1e3;
        gbs[i] = ms[i] > 0 ? moved / (ms[i] * 1e6) : 0;
    }
    gm_stats st;
    gm_stats_compute(us, n, &st);
    const struct { const char *metric; double value; } lat[] = {
        {"latency_p50", st.median}, {"latency_p90", st.p90}, {"latency_p99", st.p99}, {"latency_max", st.max},
    };
    row.has_value = true;
    row.reps = n;
    row.min = st.min;
    row.max = st.max;
    row.stdev = st.stdev;
    row.unit = "us";
    int rc = 0;
    for (size_t i = 0; i < 4 && rc == 0; i++) {
        row.metric = lat[i].metric;
        row.value = lat[i].value;
        rc = gm_bench_emit(b, &row, i == 0 ? us : NULL, i == 0 ? n : 0);
    }
    gm_stats_compute(gbs, n, &st);
    row.metric = "bandwidth";
    row.unit = "GB/s";
    row.value = st.median;
    row.min = st.min;
    row.max = st.max;
    row.stdev = st.stdev;
    if (rc == 0)
        rc = gm_bench_emit(b, &row, gbs, n);
    free(us);
    free(gbs);
    return rc;
}

static gm_row_status status_of(gm_status st)
{
    return st == GM_ERR_OOM ? GM_ROW_OOM : st == GM_ERR_UNSUPPORTED ? GM_ROW_UNSUPPORTED : GM_ROW_ERROR;
}

static void release(transfer *t)
{
    gm_buffer *bufs[] = {&t->host_src, &t->host_dst, &t->dev_a, &t->dev_b};
    for (int i = 0; i < 4; i++)
        gm_device_free(t->dev, bufs[i]);
}

static int run_point(gm_bench *b, gm_mem_kind kind, size_t bytes, int direction)
{
    transfer t = {.dev = b->dev, .bytes = bytes, .direction = direction};
    gm_status rc = gm_device_alloc(b->dev, kind, bytes, &t.host_src);
    if (rc == GM_OK)
        rc = gm_device_alloc(b->dev, kind, bytes, &t.host_dst);
    if (rc == GM_OK)
        rc = gm_device_alloc(b->dev, GM_MEM_DEVICE, bytes, &t.dev_a);
    if (rc == GM_OK)
        rc = gm_device_alloc(b->dev, GM_MEM_DEVICE, bytes, &t.dev_b);
    unsigned reps = reps_of(b);
    double *ms = rc == GM_OK ? calloc(reps, sizeof *ms) : NULL;
    bool ok = true;
    char note[160] = "";
    for (unsigned r = 0; rc == GM_OK && ms && r < reps + b->opts->warmup && ok; r++) {
        /* Fresh payloads each repetition: one to send, one waiting on the device. */
        fill_payload(t.host_src.host, bytes, 2 * r);
        uint64_t up = checksum(t.host_src.host, bytes);
        fill_payload(t.host_dst.host, bytes, 2 * r + 1);
        uint64_t down = checksum(t.host_dst.host, bytes);
        rc = b->dev->backend->copy(b->dev, 0, &t.dev_b, 0, &t.host_dst, 0, bytes, false);
        memset(t.host_dst.host, 0, bytes);
        double elapsed = 0;
        if (rc == GM_OK)
            rc = timed_transfer(&t, &elapsed);
        if (rc == GM_OK)
            rc = check_round_trip(&t, up, down, b->fault_corrupt, &ok);
        if (r >= b->opts->warmup)
            ms[r - b->opts->warmup] = elapsed;
        if (!ok)
            snprintf(note, sizeof note, "%s payload of %zu bytes failed its checksum (repetition %u)",
                     direction_names[direction], bytes, r);
    }
    int out;
    if (rc != GM_OK) {
        if (rc == GM_ERR_DEVICE_LOST)
            b->device_lost = true;
        out = emit(b, &t, kind, status_of(rc), b->dev->err.msg, NULL, 0);
    } else if (!ms) {
        out = emit(b, &t, kind, GM_ROW_ERROR, "out of host memory", NULL, 0);
    } else if (!ok) {
        out = emit(b, &t, kind, GM_ROW_MISMATCH, note, NULL, 0);
    } else {
        out = emit(b, &t, kind, GM_ROW_OK, NULL, ms, reps);
    }
    free(ms);
    release(&t);
    return out;
}

static int swap_run(gm_bench *b)
{
    const uint64_t *blocks;
    size_t n;
    blocks_of(b, &blocks, &n);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        for (int k = 0; k < 2 && rc == 0; k++)
            for (int d = 0; d < N_DIRECTIONS && rc == 0; d++) {
                rc = run_point(b, host_kinds[k], (size_t)blocks[i], d);
                char label[96], sz[32];
                snprintf(label, sizeof label, "swap %s %s %s", direction_names[d], gm_mem_kind_name(host_kinds[k]),
                         gm_format_size(blocks[i], sz, sizeof sz));
                rc = gm_bench_point_finished(b, rc, label);
            }
    return gm_bench_suite_end(b, rc);
}

const gm_suite gm_suite_swap = {
    .name = "swap",
    .summary = "host<->device transfers: latency percentiles and bandwidth, pageable and pinned",
    .count_points = swap_count,
    .run = swap_run,
};
