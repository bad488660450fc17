#include "lib/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void gm_sort_doubles(double *v, size_t n) { qsort(v, n, sizeof *v, cmp_double); }

double gm_median_in_place(double *v, size_t n)
{
    gm_sort_doubles(v, n);
    return gm_quantile_sorted(v, n, 0.5);
}

double gm_mad_in_place(double *v, size_t n, double center)
{
    for (size_t i = 0; i < n; i++)
        v[i] = fabs(v[i] - center);
    return gm_median_in_place(v, n);
}

double gm_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return 0.0;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - (double)lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

void gm_stats_compute(const double *v, size_t n, gm_stats *s)
{
    memset(s, 0, sizeof *s);
    if (n == 0)
        return;
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return;
    memcpy(sorted, v, n * sizeof *sorted);
    gm_sort_doubles(sorted, n);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += sorted[i];
    s->n = n;
    s->mean = sum / (double)n;
    s->min = sorted[0];
    s->max = sorted[n - 1];
    s->median = gm_quantile_sorted(sorted, n, 0.5);
    s->p90 = gm_quantile_sorted(sorted, n, 0.90);
    s->p99 = gm_quantile_sorted(sorted, n, 0.99);
    if (n > 1) {
        double ss = 0.0;
        for (size_t i = 0; i < n; i++)
            ss += (sorted[i] - s->mean) * (sorted[i] - s->mean);
        s->stdev = sqrt(ss / (double)(n - 1));
    }
    free(sorted);
}
