#include "analysis/stats_compare.h"
#include "lib/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* P(W <= q) under the null hypothesis, with no ties: the number of
 * arrangements of nx x-values among nx+ny ranks whose W is u, by the
 * recurrence c(m, n, u) = c(m-1, n, u-n) + c(m, n-1, u), over C(nx+ny, nx). */
static double exact_cdf(size_t nx, size_t ny, double q)
{
    size_t umax = nx * ny;
    /* c[n][u] for the current m, n = 0..ny */
    double *prev = calloc((ny + 1) * (umax + 1), sizeof *prev), *cur = calloc((ny + 1) * (umax + 1), sizeof *cur);
    if (!prev || !cur) {
        free(prev);
        free(cur);
        return NAN;
    }
#define AT(a, n, u) a[(n) * (umax + 1) + (u)]
    for (size_t n = 0; n <= ny; n++)
        AT(prev, n, 0) = 1;                 /* m = 0: one arrangement, W = 0 */
    for (size_t m = 1; m <= nx; m++) {
        memset(cur, 0, (ny + 1) * (umax + 1) * sizeof *cur);
        AT(cur, 0, 0) = 1;                  /* n = 0: W = 0 */
        for (size_t n = 1; n <= ny; n++)
            for (size_t u = 0; u <= m * n; u++)
                AT(cur, n, u) = (u >= n ? AT(prev, n, u - n) : 0) + AT(cur, n - 1, u);
        double *t = prev;
        prev = cur;
        cur = t;
    }
    double below = 0, total = 0;
    for (size_t u = 0; u <= umax; u++) {
        total += AT(prev, ny, u);
        if ((double)u <= q + 1e-9)
            below += AT(prev, ny, u);
    }
#undef AT
    free(prev);
    free(cur);
    return below / total;
}

double gm_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, double *w)
{
    if (!nx || !ny)
        return -1;
    size_t n = nx + ny;
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return -1;
    for (size_t i = 0; i < n; i++)
        sorted[i] = i < nx ? x[i] : y[i - nx];
    gm_sort_doubles(sorted, n);
    /* Rank sum of x with mid-ranks, and the tie term sum(t^3 - t). */
    double rank_sum = 0, ties = 0;
    for (size_t i = 0; i < nx; i++) {
        size_t lo = 0, hi = n;               /* first index >= x[i] */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (sorted[mid] < x[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t end = lo;
        while (end < n && sorted[end] == x[i])
            end++;
        rank_sum += (double)(lo + 1 + end) / 2.0;   /* mean of ranks lo+1..end */
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && sorted[j] == sorted[i])
            j++;
        double t = (double)(j - i);
        ties += t * t * t - t;
        i = j;
    }
    free(sorted);
    double W = rank_sum - (double)nx * (double)(nx + 1) / 2.0;
    if (w)
        *w = W;
    double p;
    if (ties == 0 && nx < 50 && ny < 50) {
        double mean = (double)nx * (double)ny / 2.0;
        double tail = W > mean ? 1.0 - exact_cdf(nx, ny, W - 1) : exact_cdf(nx, ny, W);
        p = 2 * tail;
    } else {
        double mx = (double)nx, my = (double)ny, N = (double)n;
        double z = W - mx * my / 2.0;
        double sigma = sqrt(mx * my / 12.0 * ((N + 1) - ties / (N * (N - 1))));
        if (sigma == 0)
            return 1.0;                        /* every value equal */
        double correction = z > 0 ? 0.5 : z < 0 ? -0.5 : 0;
        z = (z - correction) / sigma;
        p = erfc(fabs(z) / sqrt(2.0));         /* 2 * (1 - Phi(|z|)) */
    }
    return p > 1 ? 1 : p;
}

int gm_holm(const double *p, size_t n, double *adj)
{
    size_t *order = malloc((n + 1) * sizeof *order);
    double *copy = malloc((n + 1) * sizeof *copy);
    if (!order || !copy) {
        free(order);
        free(copy);
        return -1;
    }
    memcpy(copy, p, n * sizeof *copy);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = 1; i < n; i++)             /* insertion sort by p: families are small */
        for (size_t j = i; j > 0 && copy[order[j]] < copy[order[j - 1]]; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    double running = 0;
    for (size_t k = 0; k < n; k++) {
        double a = (double)(n - k) * copy[order[k]];
        if (a > 1)
            a = 1;
        if (a > running)
            running = a;
        adj[order[k]] = running;
    }
    free(order);
    free(copy);
    return 0;
}

double gm_median(const double *v, size_t n)
{
    gm_stats s;
    gm_stats_compute(v, n, &s);
    return s.median;
}

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double resampled_median(const double *v, size_t n, double *scratch, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = v[splitmix(rng) % n];
    return gm_median_in_place(scratch, n);
}

int gm_ratio_ci(const double *x, size_t nx, const double *y, size_t ny, double level, int resamples, uint64_t seed,
                double *lo, double *hi)
{
    if (!nx || !ny || resamples < 2)
        return -1;
    double *ratios = malloc((size_t)resamples * sizeof *ratios);
    double *scratch = malloc((nx > ny ? nx : ny) * sizeof *scratch);
    if (!ratios || !scratch) {
        free(ratios);
        free(scratch);
        return -1;
    }
    uint64_t rng = seed;
    for (int b = 0; b < resamples; b++) {
        double mx = resampled_median(x, nx, scratch, &rng), my = resampled_median(y, ny, scratch, &rng);
        ratios[b] = mx != 0 ? my / mx : my == 0 ? 1.0 : INFINITY;
    }
    gm_sort_doubles(ratios, (size_t)resamples);
    *lo = gm_quantile_sorted(ratios, (size_t)resamples, (1 - level) / 2);
    *hi = gm_quantile_sorted(ratios, (size_t)resamples, (1 + level) / 2);
    free(ratios);
    free(scratch);
    return 0;
}
