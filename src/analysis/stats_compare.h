/*
 * Statistics for comparing two samples of repetitions (gpumem compare):
 * the Mann-Whitney U test, Holm's correction over a family of tests and a
 * confidence interval for the ratio of two medians.
 */
#ifndef GM_STATS_COMPARE_H
#define GM_STATS_COMPARE_H

#include <stddef.h>
#include <stdint.h>

/* Two-sided Mann-Whitney U (Wilcoxon rank-sum) test of x[0..nx) against
 * y[0..ny), as R's wilcox.test(x, y) computes it: *w is the statistic of x
 * (its rank sum less nx(nx+1)/2, ties given mid-ranks). Without ties and
 * with nx, ny < 50 the p-value comes from the exact distribution of W;
 * otherwise from the normal approximation with the tie correction of the
 * variance and a continuity correction of 0.5. Returns the p-value, or -1
 * when a side is empty. */
double gm_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, double *w);

/* Holm-Bonferroni: adj[i] is p[i] adjusted for the n tests of the family
 * (R's p.adjust(p, "holm")). adj may be p. Returns 0, or -1 out of memory. */
int gm_holm(const double *p, size_t n, double *adj);

/* The median of v[0..n) (v is not modified); 0 when n is 0. */
double gm_median(const double *v, size_t n);

/* A percentile bootstrap interval at `level` (0.95) for the ratio
 * median(y) / median(x): `resamples` times, each side is resampled with
 * replacement, its median taken and the ratio kept; the interval is the
 * (1-level)/2 and (1+level)/2 quantiles of those ratios. The generator is
 * seeded with `seed`, so the same samples give the same interval. Ratios
 * with a zero denominator count as +infinity. Returns 0, or -1 (empty
 * side, out of memory). */
int gm_ratio_ci(const double *x, size_t nx, const double *y, size_t ny, double level, int resamples, uint64_t seed,
                double *lo, double *hi);

#endif
