#include "swap_common.h"
#include "stats.h"

#include <stdlib.h>
#include <string.h>

unsigned gm_swap_reps(const gm_bench *b)
{
    return b->opts->reps > GM_SWAP_MIN_REPS ? b->opts->reps : GM_SWAP_MIN_REPS;
}

void gm_swap_fill(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
    size_t words = n / 8;
    for (size_t i = 0; i < words; i++) {
        gm_xorshift(&x);
        memcpy(p + 8 * i, &x, 8);
    }
    for (size_t i = 8 * words; i < n; i++)
        p[i] = (unsigned char)(x >> (8 * (i % 8)));
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

gm_row_status gm_swap_status_of(gm_status st)
{
    return st == GM_ERR_OOM ? GM_ROW_OOM : st == GM_ERR_UNSUPPORTED ? GM_ROW_UNSUPPORTED : GM_ROW_ERROR;
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
