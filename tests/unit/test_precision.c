/* Host-side storage conversions (src/precision.c): they must match the
 * device's bit for bit, so they are checked exhaustively. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "lib/precision.h"

static void test_half_exact(void **state)
{
    (void)state;
    assert_int_equal(gm_float_to_half(0.0f), 0x0000);
    assert_int_equal(gm_float_to_half(-0.0f), 0x8000);
    assert_int_equal(gm_float_to_half(1.0f), 0x3c00);
    assert_int_equal(gm_float_to_half(-2.0f), 0xc000);
    assert_int_equal(gm_float_to_half(65504.0f), 0x7bff);
    assert_int_equal(gm_float_to_half(ldexpf(1, -24)), 0x0001);   /* least subnormal */
    assert_int_equal(gm_float_to_half(ldexpf(1, -14)), 0x0400);   /* least normal */
    assert_int_equal(gm_float_to_half(ldexpf(1, -26)), 0x0000);   /* below half the least subnormal */
}

static void test_half_rounding(void **state)
{
    (void)state;
    assert_int_equal(gm_float_to_half(1.0f + ldexpf(1, -11)), 0x3c00);       /* tie to even: down */
    assert_int_equal(gm_float_to_half(1.0f + 3 * ldexpf(1, -11)), 0x3c02);   /* tie to even: up */
    assert_int_equal(gm_float_to_half(1.0f + ldexpf(1, -11) + ldexpf(1, -20)), 0x3c01);
    assert_int_equal(gm_float_to_half(65519.0f), 0x7bff);
    assert_int_equal(gm_float_to_half(65520.0f), 0x7c00);                     /* rounds to inf */
    assert_int_equal(gm_float_to_half(INFINITY), 0x7c00);
    assert_int_equal(gm_float_to_half(-INFINITY), 0xfc00);
    assert_true(isnan(gm_half_to_float(gm_float_to_half(NAN))));
    assert_true(isinf(gm_half_to_float(0x7c00)));
}

static void test_half_roundtrip_all(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
            continue;                                    /* NaN payloads */
        uint16_t back = gm_float_to_half(gm_half_to_float((uint16_t)h));
        if (back != h)
            fail_msg("half 0x%04x -> %g -> 0x%04x", h, (double)gm_half_to_float((uint16_t)h), back);
    }
}

static void test_bf16(void **state)
{
    (void)state;
    assert_int_equal(gm_float_to_bf16(1.0f), 0x3f80);
    float tie_down, tie_up;
    uint32_t u = 0x3f808000u;                      /* 1 + 2^-8: halfway, even below */
    memcpy(&tie_down, &u, 4);
    u = 0x3f818000u;                               /* halfway, odd below: rounds up */
    memcpy(&tie_up, &u, 4);
    assert_int_equal(gm_float_to_bf16(tie_down), 0x3f80);
    assert_int_equal(gm_float_to_bf16(tie_up), 0x3f82);
    uint16_t qnan = gm_float_to_bf16(NAN);
    assert_true(isnan(gm_bf16_to_float(qnan)));
    assert_true((qnan & 0x40) != 0);               /* quiet */
    for (uint32_t b = 0; b < 0x10000; b++) {
        if ((b & 0x7f80) == 0x7f80 && (b & 0x7f))
            continue;
        if (gm_float_to_bf16(gm_bf16_to_float((uint16_t)b)) != b)
            fail_msg("bf16 0x%04x does not round-trip", b);
    }
}

static void test_int8_and_tolerance(void **state)
{
    (void)state;
    int8_t q[4];
    const float scale = 1.0f / 32.0f;
    gm_store(GM_INT8, q, 0, 1.0f, scale);
    gm_store(GM_INT8, q, 1, 100.0f, scale);        /* clamps */
    gm_store(GM_INT8, q, 2, -100.0f, scale);
    gm_store(GM_INT8, q, 3, 0.5f / 32.0f, scale);  /* tie: rint to even (0) */
    assert_int_equal(q[0], 32);
    assert_int_equal(q[1], 127);
    assert_int_equal(q[2], -127);
    assert_int_equal(q[3], 0);
    assert_true(gm_load(GM_INT8, q, 0, scale) == 1.0f);
    assert_true(gm_tolerance(GM_FP32, 1.0, scale) > 0);
    assert_true(gm_tolerance(GM_FP16, 100.0, scale) > gm_tolerance(GM_FP16, 1.0, scale));
    assert_true(gm_tolerance(GM_BF16, 1.0, scale) > gm_tolerance(GM_FP16, 1.0, scale));
    assert_true(gm_tolerance(GM_INT8, 0.0, scale) >= scale);
}

static void test_names(void **state)
{
    (void)state;
    for (int p = 0; p < GM_PREC_COUNT; p++)
        assert_int_equal(gm_precision_parse(gm_precision_name((gm_precision)p)), p);
    assert_int_equal(gm_precision_parse("fp64"), -1);
    assert_int_equal(gm_precision_size(GM_FP32), 4);
    assert_int_equal(gm_precision_size(GM_BF16), 2);
    assert_int_equal(gm_precision_size(GM_INT8), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_exact),   cmocka_unit_test(test_half_rounding),
        cmocka_unit_test(test_half_roundtrip_all), cmocka_unit_test(test_bf16),
        cmocka_unit_test(test_int8_and_tolerance), cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests_name("precision", tests, NULL, NULL);
}
