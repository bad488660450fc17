#include "bench/swap/common.h"
#include "lib/host_memory.h"
#include "lib/stats.h"
#include "lib/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned gm_swap_reps(const gm_bench *b)
{
    return b->opts->reps > GM_SWAP_MIN_REPS ? b->opts->reps : GM_SWAP_MIN_REPS;
}

void gm_swap_stream_init(gm_swap_stream *s, uint64_t seed)
{
    s->x = 0x9e3779b97f4a7c15ull * (seed + 1);
}

void gm_swap_stream_next(gm_swap_stream *s, unsigned char *p, size_t n)
{
    size_t words = n / 8;
    for (size_t i = 0; i < words; i++) {
        gm_xorshift(&s->x);
        memcpy(p + 8 * i, &s->x, 8);
    }
    for (size_t i = 8 * words; i < n; i++)
        p[i] = (unsigned char)(s->x >> (8 * (i % 8)));
}

void gm_swap_fill(unsigned char *p, size_t n, uint64_t seed)
{
    gm_swap_stream s;
    gm_swap_stream_init(&s, seed);
    gm_swap_stream_next(&s, p, n);
}

uint64_t gm_swap_checksum(const unsigned char *p, size_t n)
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

bool gm_swap_fits(gm_bench *b, uint64_t device_bytes, uint64_t host_bytes, char *note, size_t len)
{
    gm_device *dev = b->dev;
    uint64_t free_b;
    bool known = gm_device_free_memory(dev, GM_FREE_UNKNOWN_ZERO, &free_b);
    bool cpu = dev->info.type == GM_DEV_CPU;
    uint64_t need = cpu ? device_bytes + host_bytes : device_bytes;
    char a[32], f[32], h[32];
    if (known && need > free_b) {
        snprintf(note, len, "needs %s of %s, %s free%s", gm_format_size(need, a, sizeof a),
                 cpu ? "memory (device and host buffers alike, on a CPU device)" : "device memory",
                 gm_format_size(free_b, f, sizeof f), dev->mem_limit ? " under the memory limit" : "");
        return false;
    }
    uint64_t avail = gm_host_mem_available();
    if (avail && host_bytes > avail / 2) {
        snprintf(note, len, "needs %s of host memory, more than half of the %s available",
                 gm_format_size(host_bytes, h, sizeof h), gm_format_size(avail, a, sizeof a));
        return false;
    }
    return true;
}

int gm_swap_emit_status(gm_bench *b, gm_row row, gm_row_status status, const char *note)
{
    row.metric = "latency_p50";
    row.unit = "us";
    row.status = status;
    row.note = note;
    row.has_value = false;
    return gm_bench_emit(b, &row, NULL, 0);
}

/* One row of the distribution of v[0..n). */
static int emit_stat(gm_bench *b, gm_row *row, const char *metric, const char *unit, double value,
                     const gm_stats *st, const double *samples, size_t n)
{
    row->metric = metric;
    row->unit = unit;
    row->value = value;
    row->min = st->min;
    row->max = st->max;
    row->stdev = st->stdev;
    return gm_bench_emit(b, row, samples, samples ? n : 0);
}

int gm_swap_emit_latency(gm_bench *b, gm_row row, const double *ms, size_t n, double moved, unsigned per)
{
    double *us = malloc(n * sizeof *us), *gbs = malloc(n * sizeof *gbs), *per_us = malloc(n * sizeof *per_us);
    if (!us || !gbs || !per_us) {
        free(us);
        free(gbs);
        free(per_us);
        return gm_swap_emit_status(b, row, GM_ROW_ERROR, "out of host memory");
    }
    for (size_t i = 0; i < n; i++) {
        us[i] = ms[i] * 1e3;
        per_us[i] = us[i] / (per ? per : 1);
        gbs[i] = ms[i] > 0 ? moved / (ms[i] * 1e6) : 0;
    }
    row.status = GM_ROW_OK;
    row.has_value = true;
    row.reps = n;
    gm_stats st;
    gm_stats_compute(us, n, &st);
    int rc = emit_stat(b, &row, "latency_p50", "us", st.median, &st, us, n);
    if (rc == 0)
        rc = emit_stat(b, &row, "latency_p90", "us", st.p90, &st, NULL, n);
    if (rc == 0)
        rc = emit_stat(b, &row, "latency_p99", "us", st.p99, &st, NULL, n);
    if (rc == 0)
        rc = emit_stat(b, &row, "latency_max", "us", st.max, &st, NULL, n);
    if (rc == 0 && per > 1) {
        gm_stats_compute(per_us, n, &st);
        rc = emit_stat(b, &row, "latency_per_block_p50", "us", st.median, &st, per_us, n);
        if (rc == 0)
            rc = emit_stat(b, &row, "latency_per_block_p99", "us", st.p99, &st, NULL, n);
    }
    if (rc == 0) {
        gm_stats_compute(gbs, n, &st);
        rc = emit_stat(b, &row, "bandwidth", "GB/s", st.median, &st, gbs, n);
    }
    free(us);
    free(gbs);
    free(per_us);
    return rc;
}
