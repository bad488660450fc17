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

/* Sorts v[0..n) in ascending order. */
void gm_sort_doubles(double *v, size_t n);

/* The median of v[0..n) (gm_quantile_sorted at 0.5), which it sorts. */
double gm_median_in_place(double *v, size_t n);

/* A normal sample's MAD times this is its standard deviation. */
#define GM_MAD_TO_SIGMA 1.4826

/* The median absolute deviation of v[0..n) from `center`, unscaled; v is
 * overwritten with the absolute deviations (sorted). */
double gm_mad_in_place(double *v, size_t n, double center);

/* The q-quantile (0 <= q <= 1) of sorted[0..n), interpolated linearly
 * between closest ranks (R's type 7). */
double gm_quantile_sorted(const double *sorted, size_t n, double q);

#endif
