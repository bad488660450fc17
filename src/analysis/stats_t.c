/* Student's t distribution, the two-sample t test and the minimum
 * detectable effect (stats_compare.h). */
#include "analysis/stats_compare.h"

#include <float.h>
#include <math.h>

/* The continued fraction of the regularized incomplete beta function
 * (modified Lentz's method; Press et al., Numerical Recipes, 3rd ed.,
 * section 6.4). NAN when it does not converge. */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 1000; m++) {
        double m2 = 2.0 * m, aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15)
            return h;
    }
    return NAN;
}

/* I_x(a, b), the regularized incomplete beta function. */
static double beta_inc(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_cf(a, b, x) / a;
    return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double gm_t_cdf(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return t > 0 ? 1 : 0;
    double tail = 0.5 * beta_inc(df / 2, 0.5, df / (df + t * t));   /* P(T > |t|) */
    return t > 0 ? 1 - tail : tail;
}

double gm_t_quantile(double p, double df)
{
    if (!(p > 0 && p < 1) || !(df > 0))
        return NAN;
    if (p == 0.5)
        return 0;
    if (p < 0.5)
        return -gm_t_quantile(1 - p, df);
    double lo = 0, hi = 1;
    while (gm_t_cdf(hi, df) < p && hi < 1e300)
        hi *= 2;
    for (int i = 0; i < 300 && hi - lo > 1e-14 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (gm_t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

static void mean_var(const double *v, size_t n, double *mean, double *var)
{
    double m = 0, s = 0;
    for (size_t i = 0; i < n; i++)
        m += v[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m);
    *mean = m;
    *var = n > 1 ? s / (double)(n - 1) : 0;
}

int gm_t_test(const double *x, size_t nx, const double *y, size_t ny, gm_t_result *r)
{
    if (!nx || !ny || nx + ny < 3)
        return -1;
    double mx, vx, my, vy;
    mean_var(x, nx, &mx, &vx);
    mean_var(y, ny, &my, &vy);
    double a = vx / (double)nx, b = vy / (double)ny;
    r->diff = my - mx;
    if (nx >= 2 && ny >= 2) {
        r->welch = 1;
        r->se = sqrt(a + b);
        double den = (nx > 1 ? a * a / (double)(nx - 1) : 0) + (ny > 1 ? b * b / (double)(ny - 1) : 0);
        r->df = den > 0 ? (a + b) * (a + b) / den : (double)(nx + ny - 2);
    } else {
        r->welch = 0;             /* one side of one value: the other's variance serves both */
        r->df = (double)(nx + ny - 2);
        double pooled = ((double)(nx - 1) * vx + (double)(ny - 1) * vy) / r->df;
        r->se = sqrt(pooled * (1.0 / (double)nx + 1.0 / (double)ny));
    }
    if (r->se > 0) {
        r->t = r->diff / r->se;
        r->p = 2 * gm_t_cdf(-fabs(r->t), r->df);
    } else {
        r->t = r->diff == 0 ? 0 : copysign(INFINITY, r->diff);
        r->p = r->diff == 0 ? 1 : 0;
    }
    if (r->p > 1)
        r->p = 1;
    return 0;
}

double gm_t_mde(double se, double df, double alpha, double power)
{
    if (!(df > 0) || isnan(se))
        return NAN;
    return (gm_t_quantile(1 - alpha / 2, df) + gm_t_quantile(power, df)) * se;
}
