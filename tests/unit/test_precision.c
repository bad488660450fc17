/* Host-side storage conversions (src/precision.c): they must match the
 * device's bit for bit, so they are checked exhaustively. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
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

/* fp8: the 256 codes of each format, decoded independently of
 * src/lib/precision.c (value = (-1)^s * 2^(e - bias) * (1 + m / 2^M), or
 * the subnormal 2^(1 - bias) * m / 2^M). */
static double fp8_ref_value(unsigned c, unsigned M, int bias)
{
    unsigned E = 7 - M, e = (c >> M) & ((1u << E) - 1), m = c & ((1u << M) - 1);
    double v = e ? ldexp(1.0 + ldexp(m, -(int)M), (int)e - bias) : ldexp(m, 1 - bias - (int)M);
    return (c & 0x80) ? -v : v;
}

static void test_fp8_decode_all(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 256; c++) {
        float a = gm_fp8e4m3_to_float((uint8_t)c), b = gm_fp8e5m2_to_float((uint8_t)c);
        if ((c & 0x7f) == 0x7f)
            assert_true(isnan(a));                              /* e4m3: S.1111.111 only */
        else if (a != (float)fp8_ref_value(c, 3, 7))
            fail_msg("e4m3 0x%02x -> %g", c, (double)a);
        if ((c & 0x7c) == 0x7c)
            assert_true((c & 3) ? isnan(b) : isinf(b) && (b < 0) == ((c & 0x80) != 0));
        else if (b != (float)fp8_ref_value(c, 2, 15))
            fail_msg("e5m2 0x%02x -> %g", c, (double)b);
        /* Every non-NaN code stores back as itself (e4m3: +-0 too). */
        if ((c & 0x7f) != 0x7f && gm_float_to_fp8e4m3(a) != c)
            fail_msg("e4m3 0x%02x does not round-trip", c);
        if (!((c & 0x7c) == 0x7c && (c & 3)) && gm_float_to_fp8e5m2(b) != c)
            fail_msg("e5m2 0x%02x does not round-trip", c);
    }
    assert_true(gm_fp8e4m3_to_float(0x7e) == 448.0f);
    assert_true(gm_fp8e5m2_to_float(0x7b) == 57344.0f);
    assert_true(gm_fp8e4m3_to_float(0x01) == 0x1p-9f);
    assert_true(gm_fp8e5m2_to_float(0x01) == 0x1p-16f);
}

/* Brute-force round to nearest, ties to the even code, over the finite
 * non-negative codes; e5m2 treats +inf as the next value 2^16 (IEEE
 * overflow), e4m3 clamps to 448 (saturation). */
static unsigned fp8_ref_round(float f, unsigned M, int bias, bool saturate)
{
    unsigned sign = signbit(f) ? 0x80 : 0;
    double a = fabs((double)f);
    unsigned last = saturate ? 0x7e : 0x7c;
    if (saturate && a > 448.0)
        return sign | 0x7e;
    if (!saturate && a >= 65536.0)
        return sign | 0x7c;
    unsigned best = 0;
    double best_d = INFINITY;
    for (unsigned c = 0; c <= last; c++) {
        double v = c == 0x7c && !saturate ? 65536.0 : fp8_ref_value(c, M, bias);
        double d = fabs(v - a);
        if (d < best_d || (d == best_d && !(c & 1))) {
            best = c;
            best_d = d;
        }
    }
    return sign | best;
}

static void test_fp8_encode_sweep(void **state)
{
    (void)state;
    /* Every float class: a sweep over the bit patterns (both signs, zero,
     * fp32 subnormals, fp8 subnormals and their ties, normals, the
     * saturation and overflow ranges), and every halfway point between
     * neighbouring codes and one fp32 ulp either side of it. */
    for (uint64_t u = 0; u <= 0xffffffffu; u += 0x1235) {
        float f;
        uint32_t v = (uint32_t)u;
        memcpy(&f, &v, 4);
        if (isnan(f))
            continue;
        if (gm_float_to_fp8e4m3(f) != fp8_ref_round(f, 3, 7, true))
            fail_msg("e4m3(%a) = 0x%02x, want 0x%02x", (double)f, gm_float_to_fp8e4m3(f), fp8_ref_round(f, 3, 7, true));
        if (gm_float_to_fp8e5m2(f) != fp8_ref_round(f, 2, 15, false))
            fail_msg("e5m2(%a) = 0x%02x, want 0x%02x", (double)f, gm_float_to_fp8e5m2(f), fp8_ref_round(f, 2, 15, false));
    }
    for (unsigned c = 0; c < 0x7c; c++)
        for (int fmt = 0; fmt < 2; fmt++) {
            unsigned M = fmt ? 2 : 3;
            int bias = fmt ? 15 : 7;
            float mid = (float)((fp8_ref_value(c, M, bias) + fp8_ref_value(c + 1, M, bias)) / 2);
            float probe[] = {mid, nextafterf(mid, 0), nextafterf(mid, INFINITY), -mid};
            for (int i = 0; i < 4; i++) {
                unsigned got = fmt ? gm_float_to_fp8e5m2(probe[i]) : gm_float_to_fp8e4m3(probe[i]);
                if (got != fp8_ref_round(probe[i], M, bias, !fmt))
                    fail_msg("fp8 %s(%a) = 0x%02x", fmt ? "e5m2" : "e4m3", (double)probe[i], got);
            }
        }
    /* The classes by name. */
    assert_int_equal(gm_float_to_fp8e4m3(0.0f), 0x00);
    assert_int_equal(gm_float_to_fp8e4m3(-0.0f), 0x80);
    assert_int_equal(gm_float_to_fp8e5m2(-0.0f), 0x80);
    assert_int_equal(gm_float_to_fp8e4m3(0x1p-130f), 0x00);        /* fp32 subnormal */
    assert_int_equal(gm_float_to_fp8e4m3(0x1p-10f), 0x00);         /* tie to even: 0 */
    assert_int_equal(gm_float_to_fp8e4m3(0x1.8p-9f), 0x02);        /* tie to even: up */
    assert_int_equal(gm_float_to_fp8e4m3(464.0f), 0x7e);           /* tie: saturates */
    assert_int_equal(gm_float_to_fp8e4m3(1e6f), 0x7e);
    assert_int_equal(gm_float_to_fp8e4m3(-INFINITY), 0xfe);        /* no infinities */
    assert_int_equal(gm_float_to_fp8e4m3(NAN), 0x7f);
    assert_int_equal(gm_float_to_fp8e5m2(61439.0f), 0x7b);
    assert_int_equal(gm_float_to_fp8e5m2(61440.0f), 0x7c);         /* tie: rounds to inf */
    assert_int_equal(gm_float_to_fp8e5m2(-INFINITY), 0xfc);
    assert_int_equal(gm_float_to_fp8e5m2(NAN), 0x7f);
    assert_int_equal(gm_float_to_fp8e5m2(0x1p-17f), 0x00);         /* half the least subnormal */
    assert_int_equal(gm_float_to_fp8e5m2(0x1.8p-16f), 0x02);
    uint8_t b[2];
    gm_store(GM_FP8E4M3, b, 0, 1.0f, 1.0f);
    gm_store(GM_FP8E5M2, b, 1, -2.0f, 1.0f);
    assert_int_equal(b[0], 0x38);
    assert_int_equal(b[1], 0xc0);
    assert_true(gm_load(GM_FP8E4M3, b, 0, 1.0f) == 1.0f && gm_load(GM_FP8E5M2, b, 1, 1.0f) == -2.0f);
    assert_true(gm_tolerance(GM_FP8E5M2, 1.0, 1.0f) > gm_tolerance(GM_FP8E4M3, 1.0, 1.0f));
    assert_true(gm_tolerance(GM_FP8E4M3, 0.0, 1.0f) == 2 * 0x1p-9);
}

static void test_int4(void **state)
{
    (void)state;
    /* k = 5 rows, n = 3 columns, groups of 2 rows: 3 groups. */
    const size_t k = 5, n = 3, g = 2;
    float w[15];
    for (size_t i = 0; i < 15; i++)
        w[i] = (float)((int)i - 7) / 4.0f;
    assert_int_equal(gm_int4_packed_bytes(k, n), 8);
    assert_int_equal(gm_int4_scale_bytes(k, n, g), 3 * 3 * 2);
    assert_int_equal(gm_int4_scale_bytes(4096, 4096, 128), 32 * 4096 * 2);
    uint8_t packed[8];
    uint16_t scales[9];
    gm_int4_quantize(w, k, n, g, packed, scales);
    for (size_t kk = 0; kk < k; kk++)
        for (size_t j = 0; j < n; j++) {
            float sc = gm_half_to_float(scales[kk / g * n + j]);
            float got = gm_int4_load(packed, scales, n, g, kk, j);
            if (fabsf(got - w[kk * n + j]) > sc / 2 * 1.0001f)
                fail_msg("int4 w[%zu][%zu] = %g, got %g (scale %g)", kk, j, (double)w[kk * n + j], (double)got,
                         (double)sc);
        }
    /* Nibble order: element 0 in the low nibble of byte 0. */
    assert_int_equal(packed[0] & 0xf, (unsigned)(int)rintf(w[0] / gm_half_to_float(scales[0])) & 0xf);
    assert_int_equal(gm_precision_bits(GM_INT4), 4);
    assert_int_equal(gm_precision_bits(GM_FP8E4M3), 8);
}

/* gm_unit_roundoff and gm_least_normal against the conversions: at 1 and
 * at the least normal the next value up lies 2u above, the point halfway
 * rounds to even (down); below the least normal the subnormals keep its
 * spacing. fp32 against float.h. */
static float round_trip(gm_precision p, float v)
{
    unsigned char buf[4];
    gm_store(p, buf, 0, v, 1.0f);
    return gm_load(p, buf, 0, 1.0f);
}

static void test_unit_roundoff(void **state)
{
    (void)state;
    assert_true(gm_unit_roundoff(GM_FP32) == FLT_EPSILON / 2);
    assert_true(gm_least_normal(GM_FP32) == FLT_MIN);
    const gm_precision floats[] = {GM_FP16, GM_BF16, GM_FP8E4M3, GM_FP8E5M2};
    const double want_u[] = {0x1p-11, 0x1p-8, 0x1p-4, 0x1p-3};
    for (size_t f = 0; f < sizeof floats / sizeof floats[0]; f++) {
        gm_precision p = floats[f];
        double u = gm_unit_roundoff(p), ln = gm_least_normal(p);
        assert_true(u == want_u[f]);
        for (int at = 0; at < 2; at++) {
            float x = at ? (float)ln : 1.0f, step = (float)(2 * u) * x;
            assert_true(round_trip(p, x) == x);
            assert_true(round_trip(p, x + step) == x + step);
            assert_true(round_trip(p, x + step / 2) == x);
        }
        float below = (float)(ln - 2 * u * ln);   /* the largest subnormal */
        assert_true(round_trip(p, below) == below);
    }
    assert_true(gm_unit_roundoff(GM_INT8) == 0 && gm_unit_roundoff(GM_INT4) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_exact),   cmocka_unit_test(test_half_rounding),
        cmocka_unit_test(test_half_roundtrip_all), cmocka_unit_test(test_bf16),
        cmocka_unit_test(test_int8_and_tolerance), cmocka_unit_test(test_names),
        cmocka_unit_test(test_fp8_decode_all), cmocka_unit_test(test_fp8_encode_sweep),
        cmocka_unit_test(test_int4),          cmocka_unit_test(test_unit_roundoff),
    };
    return cmocka_run_group_tests_name("precision", tests, NULL, NULL);
}
