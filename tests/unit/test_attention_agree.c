/*
 * The two attention implementations agree: naive (score matrix) and tiled
 * (online softmax) run on the OpenCL device over the same inputs, causal
 * and not, in every precision, and their outputs match element by element
 * within the storage format's rounding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "opencl_fixture.h"
#include "workload_point.h"

/* Runs one implementation at shape s and returns its output (n floats). */
static float *run(gm_shape s, const char *impl, size_t n)
{
    const gm_workload *r = &gm_workload_attention;
    r->adapt(&s, impl);
    gm_shape_complete(&s);
    workload_point p;
    workload_point_run(&p, r, &s, impl);
    float *out = malloc(n * sizeof *out);
    assert_non_null(out);
    assert_int_equal(r->output(p.state, out, n), GM_OK);
    workload_point_end(&p);
    return out;
}

static void agree(gm_precision p, bool causal)
{
    gm_shape s = {0};
    s.prec = p;
    s.batch = 2;
    s.seq = 37;
    s.heads = 3;
    s.head_dim = 16;
    s.causal = causal;
    size_t n = 2 * 3 * 37 * 16;
    float *naive = run(s, "naive", n), *tiled = run(s, "tiled", n);
    double worst = 0.0, energy = 0.0;
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)naive[i] - tiled[i]);
        /* Each rounds its fp32 result once to the storage format. */
        double tol = 2.0 * gm_tolerance(p, naive[i], 1.0f / 127.0f) + 1e-5;
        worst = d > worst ? d : worst;
        energy += fabs((double)naive[i]);
        differ += !(d <= tol);
    }
    free(naive);
    free(tiled);
    if (differ)
        fail_msg("%s%s: %zu of %zu outputs differ (worst %g)", gm_precision_name(p), causal ? " causal" : "",
                 differ, n, worst);
    assert_true(energy > 0.01 * (double)n);   /* the outputs are not all zero */
}

static void test_every_precision(void **state)
{
    (void)state;
    for (int p = 0; p < GM_PREC_COUNT; p++) {
        if (p == GM_INT4)
            continue;                      /* a weight precision: attention has none */
        agree((gm_precision)p, false);
        agree((gm_precision)p, true);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_precision)};
    return cmocka_run_group_tests(tests, open_device, close_device);
}
