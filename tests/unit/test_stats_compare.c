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


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mann_whitney_exact), cmocka_unit_test(test_mann_whitney_ties),
        cmocka_unit_test(test_holm),               cmocka_unit_test(test_ratio_ci),
        cmocka_unit_test(test_direction),          
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
