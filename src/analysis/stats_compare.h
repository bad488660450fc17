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

/* Student's t distribution with df (> 0, not necessarily whole) degrees
 * of freedom: P(T <= t), and the t with P(T <= t) = p (0 < p < 1); NAN
 * outside those ranges. As R's pt(t, df) and qt(p, df). */
double gm_t_cdf(double t, double df);
double gm_t_quantile(double p, double df);

/* A two-sample t test of y against x (gm_t_test). */
typedef struct {
    double diff;    /* mean(y) - mean(x) */
    double se;      /* its standard error */
    double df;      /* degrees of freedom */
    double t, p;    /* the statistic and its two-sided p-value */
    int welch;      /* 1: Welch's test; 0: Student's, pooled variance */
} gm_t_result;

/* With two values or more a side, Welch's unequal-variances t test (R's
 * t.test(y, x)); with one value on a side, Student's test with the pooled
 * variance, which is then the other side's (R's t.test(y, x, var.equal =
 * TRUE)). Sides of no spread give p 1 for equal means, 0 otherwise.
 * Returns 0, or -1 when a side is empty or there are fewer than 3 values. */
int gm_t_test(const double *x, size_t nx, const double *y, size_t ny, gm_t_result *r);

/* The minimum detectable effect of a two-sided t test at level alpha with
 * the given power (0.8): (t_{1-alpha/2,df} + t_{power,df}) * se (Bloom,
 * "Minimum detectable effects", Evaluation Review 19(5), 1995), in the
 * units of se; NAN when df is not positive. */
double gm_t_mde(double se, double df, double alpha, double power);

#endif
