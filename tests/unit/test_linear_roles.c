/*
 * linear's both kernels on the OpenCL device, whatever the device type
 * prefers: `tiled` (the GPU kernel, grid variant) and `blocked` (the CPU
 * kernel) verify against the CPU reference (bench/workloads/linear.c check(): the
 * same rounding, 2 units of the output format's roundoff plus the fp32
 * reduction bound k * 2^-23 * sum|x w|) in fp8 (e4m3, e5m2), with int4
 * weights (fp16 scales per group, a group not dividing k) beside 16-bit
 * and fp32 activations, and with fp8 weights beside bf16 activations.
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

static void run(gm_precision act, gm_precision w, uint64_t group, const char *impl)
{
    const gm_workload *r = &gm_workload_linear;
    gm_shape s = {0};
    s.batch = 3;
    s.seq = 13;                 /* 39 rows: not a multiple of the tiles */
    s.hidden = 150;             /* k: groups of 64 leave 22 */
    s.out = 70;
    s.group_size = group;
    gm_shape base = s;
    base.weight_prec = (unsigned)w + 1;
    gm_shape_set_roles(&s, &base, act);
    s.prec = act;
    gm_shape_complete(&s);
    workload_point p;
    workload_point_run(&p, r, &s, impl);
    bool correct = false;
    char note[256] = "";
    assert_int_equal(r->verify(p.state, 0, &correct, note, sizeof note), GM_OK);
    if (!correct)
        fail_msg("%s %s: %s", impl, gm_roles_label(&s), note);
    workload_point_end(&p);
}

static void test_both_kernels(void **state)
{
    (void)state;
    static const struct {
        gm_precision act, w;
    } cases[] = {
        {GM_FP8E4M3, GM_FP8E4M3}, {GM_FP8E5M2, GM_FP8E5M2}, {GM_BF16, GM_INT4}, {GM_FP16, GM_INT4},
        {GM_FP32, GM_INT4},       {GM_INT8, GM_INT4},       {GM_BF16, GM_FP8E4M3}, {GM_FP16, GM_FP8E5M2},
    };
    const char *impls[] = {"tiled", "blocked"};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int i = 0; i < 2; i++)
            run(cases[c].act, cases[c].w, 64, impls[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_both_kernels)};
    return cmocka_run_group_tests(tests, open_device, close_device);
}
