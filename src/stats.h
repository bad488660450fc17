/* Summary statistics over a sample of repetitions. */
#ifndef GM_STATS_H
#define GM_STATS_H

#include <stddef.h>

typedef struct {
    size_t n;
    double mean, median, min, max;
    double stdev;          /* sample standard deviation (n-1); 0 if n < 2 */
    double p90, p99;
} gm_stats;

/* Fills s from v[0..n). n == 0 leaves every field 0. v is not modified. */
void gm_stats_compute(const double *v, size_t n, gm_stats *s);

/* The q-quantile (0 <= q <= 1) of sorted[0..n), interpolated linearly
 * between closest ranks (R's type 7). */
double gm_quantile_sorted(const double *sorted, size_t n, double q);

#endif
