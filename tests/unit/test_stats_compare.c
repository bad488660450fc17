/* The statistics of gpumem compare (src/stats_compare.c) against what R
 * gives for small hand-made samples. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/compare.h"
#include "analysis/stats_compare.h"

static void near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.10g, want %.10g", got, want);
}

/* Exact distribution, no ties: wilcox.test(1:3, 4:6) W = 0, p = 0.1;
 * wilcox.test(1:5, 6:10) W = 0, p = 0.007937; wilcox.test(c(1,4,6), c(2,3,5,7))
 * W = 5, p = 0.8571 (R). */
static void test_mann_whitney_exact(void **state)
{
    (void)state;
    double w;
    near(gm_mann_whitney((double[]){1, 2, 3}, 3, (double[]){4, 5, 6}, 3, &w), 0.1, 1e-12);
    near(w, 0, 0);
    near(gm_mann_whitney((double[]){1, 2, 3, 4, 5}, 5, (double[]){6, 7, 8, 9, 10}, 5, &w), 2.0 / 252, 1e-12);
    near(gm_mann_whitney((double[]){6, 7, 8, 9, 10}, 5, (double[]){1, 2, 3, 4, 5}, 5, &w), 2.0 / 252, 1e-12);
    near(w, 25, 0);
    near(gm_mann_whitney((double[]){1, 4, 6}, 3, (double[]){2, 3, 5, 7}, 4, &w), 30.0 / 35, 1e-12);
    near(w, 5, 0);
}

/* Ties: the normal approximation with tie and continuity corrections.
 * wilcox.test(1:5, 3:7) W = 4.5, p = 0.1138 (R: 2 * pnorm(-7.5 / sqrt(22.5))). */
static void test_mann_whitney_ties(void **state)
{
    (void)state;
    double w;
    near(gm_mann_whitney((double[]){1, 2, 3, 4, 5}, 5, (double[]){3, 4, 5, 6, 7}, 5, &w), 0.113846, 1e-6);
    near(w, 4.5, 0);
    near(gm_mann_whitney((double[]){2, 2, 2}, 3, (double[]){2, 2, 2}, 3, &w), 1.0, 0);
    assert_true(gm_mann_whitney((double[]){1}, 1, NULL, 0, &w) < 0);
}

/* p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02 */
static void test_holm(void **state)
{
    (void)state;
    double p[] = {0.01, 0.04, 0.03, 0.005}, adj[4];
    assert_int_equal(gm_holm(p, 4, adj), 0);
    near(adj[0], 0.03, 1e-12);
    near(adj[1], 0.06, 1e-12);
    near(adj[2], 0.06, 1e-12);
    near(adj[3], 0.02, 1e-12);
    double big[] = {0.5, 0.9};
    assert_int_equal(gm_holm(big, 2, big), 0);
    near(big[0], 1.0, 0);
    near(big[1], 1.0, 0);
}

static void test_ratio_ci(void **state)
{
    (void)state;
    double x[] = {10, 11, 9, 10.5, 9.5, 10.2, 9.8, 10.1}, y[8], lo, hi, lo2, hi2;
    for (int i = 0; i < 8; i++)
        y[i] = 2 * x[i];
    assert_int_equal(gm_ratio_ci(x, 8, y, 8, 0.95, 2000, 42, &lo, &hi), 0);
    assert_true(lo > 1.5 && lo <= 2 && hi >= 2 && hi < 2.5);
    assert_int_equal(gm_ratio_ci(x, 8, y, 8, 0.95, 2000, 42, &lo2, &hi2), 0);
    near(lo2, lo, 0);                /* seeded: the same interval again */
    near(hi2, hi, 0);
    assert_int_equal(gm_ratio_ci(x, 8, x, 8, 0.95, 2000, 7, &lo, &hi), 0);
    assert_true(lo < 1 && hi > 1);
    near(gm_median((double[]){3, 1, 2, 10}, 4), 2.5, 0);
}

static void test_direction(void **state)
{
    (void)state;
    assert_int_equal(gm_cmp_worse_direction("time"), 1);
    assert_int_equal(gm_cmp_worse_direction("latency_p99"), 1);
    assert_int_equal(gm_cmp_worse_direction("alloc_latency_p50"), 1);
    assert_int_equal(gm_cmp_worse_direction("bandwidth"), -1);
    assert_int_equal(gm_cmp_worse_direction("max_batch"), -1);
    assert_int_equal(gm_cmp_worse_direction("probes"), 0);
    assert_int_equal(gm_cmp_worse_direction("max_batch_model"), 0);
}

/* Reference figures from SciPy 1.17.1: scipy.stats.t.cdf, t.ppf and
 * ttest_ind (equal_var False: Welch; True: Student). */
static void test_t_distribution(void **state)
{
    (void)state;
    near(gm_t_cdf(2.0, 5), 0.9490302605850708, 1e-12);
    near(gm_t_cdf(-1.3, 2.7), 0.14672632185192266, 1e-12);
    near(gm_t_cdf(0.4, 1), 0.6211189415908434, 1e-12);
    near(gm_t_cdf(8.5, 3.2), 0.9986675386733954, 1e-12);
    near(gm_t_cdf(3.0, 30), 0.9973050179671741, 1e-12);
    near(gm_t_quantile(0.975, 4), 2.7764451051977934, 1e-9);
    near(gm_t_quantile(0.8, 7.3), 0.8936713571802273, 1e-9);
    near(gm_t_quantile(1 - 0.05 / 28 / 2, 8), 4.586935558430041, 1e-9);
    near(gm_t_quantile(1 - 0.05 / 28 / 2, 2), 23.63261404981528, 1e-8);
    near(gm_t_quantile(0.999, 1), 318.30883898555015, 1e-7);
    near(gm_t_quantile(0.025, 4), -2.7764451051977934, 1e-9);
    assert_true(isnan(gm_t_quantile(1, 4)) && isnan(gm_t_cdf(1, 0)));
}

static void test_t_test(void **state)
{
    (void)state;
    gm_t_result r;
    const double x[] = {1.02, 0.97, 1.05, 0.99, 1.01}, y[] = {1.10, 1.16, 1.08, 1.12};
    assert_int_equal(gm_t_test(x, 5, y, 4, &r), 0);
    assert_int_equal(r.welch, 1);
    near(r.t, 4.906055066338471, 1e-10);
    near(r.p, 0.002519905565707722, 1e-10);
    near(r.df, 6.144916325756709, 1e-10);
    const double x2[] = {5.1, 4.9, 5.3, 5.0}, y2[] = {5.6};
    assert_int_equal(gm_t_test(x2, 4, y2, 1, &r), 0);
    assert_int_equal(r.welch, 0);
    near(r.t, 2.7495454169735045, 1e-10);
    near(r.p, 0.07076921168136188, 1e-10);
    near(r.df, 3, 0);
    assert_int_equal(gm_t_test(x2, 1, y2, 1, &r), -1);
    const double same[] = {2, 2, 2};
    assert_int_equal(gm_t_test(same, 3, same, 3, &r), 0);
    near(r.p, 1, 0);
    /* Bloom's MDE, (t_{1-a/2} + t_{0.8}) * se at df 8, a 0.05/28. */
    near(gm_t_mde(0.01, 8, 0.05 / 28, 0.8), 0.05475825076197061, 1e-10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mann_whitney_exact), cmocka_unit_test(test_mann_whitney_ties),
        cmocka_unit_test(test_holm),               cmocka_unit_test(test_ratio_ci),
        cmocka_unit_test(test_direction),          cmocka_unit_test(test_t_distribution),
        cmocka_unit_test(test_t_test),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
