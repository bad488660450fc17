/*
 * The device's fp8 conversions (kernels/gm_portable.h, run through
 * kernels/convert.cl on the OpenCL device: PoCL in CI) are bit-identical
 * to the host's (src/lib/precision.c): all 256 codes of e4m3 and e5m2
 * decoded, and a sweep of floats of every class (zero, fp32 and fp8
 * subnormals, normals, every halfway point between codes and one ulp
 * either side, saturation, overflow, inf, NaN) encoded; the same for the
 * half-unit conversions the stream kernels use, one and sixteen at a time.
 * And the int4 quantiser of block.cl: every weight the workloads hash
 * (k / 128 - 1 times a power of two) against every group scale they give,
 * codes and scales as gm_int4_code and gm_int4_scale give them (ties
 * included). And the int8 stream kernels' integer lanes (Q15 products,
 * pair sums) against their definitions, for every int8.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "opencl_fixture.h"
#include "bench/bench.h"
#include "bench/stream/check.h"

static size_t sweep(float *f, size_t max)
{
    size_t n = 0;
    for (uint64_t u = 0; u <= 0xffffffffu && n < max; u += 0x3f71) {
        uint32_t v = (uint32_t)u;
        memcpy(&f[n++], &v, 4);
    }
    for (unsigned c = 0; c < 0x7f; c++) {
        double a[2] = {gm_fp8e4m3_to_float((uint8_t)c), gm_fp8e5m2_to_float((uint8_t)c)};
        double b[2] = {gm_fp8e4m3_to_float((uint8_t)(c + 1)), gm_fp8e5m2_to_float((uint8_t)(c + 1))};
        for (int k = 0; k < 2 && n + 4 <= max; k++) {
            float mid = (float)((a[k] + (isfinite(b[k]) ? b[k] : 2 * a[k])) / 2);
            if (!isfinite(mid))
                continue;
            f[n++] = mid;
            f[n++] = nextafterf(mid, 0);
            f[n++] = nextafterf(mid, INFINITY);
            f[n++] = -mid;
        }
    }
    const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 448.0f, 464.0f, 1e30f, -1e30f,
                             57344.0f, 61440.0f, 0x1p-130f, -0x1p-149f, 0x1p-10f, 0x1p-17f};
    for (size_t i = 0; i < sizeof special / sizeof special[0] && n < max; i++)
        f[n++] = special[i];
    return n;
}

/* The sweep's floats on the device, and the buffers a conversion kernel
 * writes (n codes of each format, 256 decoded values of each). */
typedef struct {
    size_t n;
    gm_buffer df, c43, c52, d43, d52, hf, hc43, hc52, h43, h52;
} convert_bufs;

static void bufs_open(convert_bufs *b, const float *f, size_t n)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    struct { gm_buffer *buf; gm_mem_kind kind; size_t bytes; } all[] = {
        {&b->df, GM_MEM_DEVICE, n * 4},   {&b->c43, GM_MEM_DEVICE, n},      {&b->c52, GM_MEM_DEVICE, n},
        {&b->d43, GM_MEM_DEVICE, 256 * 4}, {&b->d52, GM_MEM_DEVICE, 256 * 4}, {&b->hf, GM_MEM_HOST, n * 4},
        {&b->hc43, GM_MEM_HOST, n},       {&b->hc52, GM_MEM_HOST, n},       {&b->h43, GM_MEM_HOST, 256 * 4},
        {&b->h52, GM_MEM_HOST, 256 * 4},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        assert_int_equal(gm_device_alloc(&dev, all[i].kind, all[i].bytes, all[i].buf), GM_OK);
    memcpy(b->hf.host, f, n * 4);
    assert_int_equal(dev.backend->copy(&dev, 0, &b->df, 0, &b->hf, 0, n * 4, false), GM_OK);
}

static void bufs_close(convert_bufs *b)
{
    gm_buffer *all[] = {&b->df, &b->c43, &b->c52, &b->d43, &b->d52, &b->hf, &b->hc43, &b->hc52, &b->h43, &b->h52};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gm_device_free(&dev, all[i]);
}

/* convert.cl's kernel `name`, built for the access pattern `chunked`;
 * *prog receives its program, released after the kernel (kernel_done). */
static gm_kernel *convert_kernel(int chunked, const char *name, gm_program **prog)
{
    gm_kernel *k = NULL;
    char variant[32];
    *prog = NULL;
    if (dev.backend->program_build(&dev, "convert", gm_kernel_variant(GM_FP32, chunked, variant, sizeof variant), NULL,
                                   prog) != GM_OK)
        fail_msg("convert.%s: %s", variant, dev.err.msg);
    if (dev.backend->kernel_get(&dev, *prog, name, &k) != GM_OK)
        fail_msg("%s: %s", name, dev.err.msg);
    return k;
}

static void kernel_done(gm_kernel *k, gm_program *prog)
{
    dev.backend->kernel_release(&dev, k);
    dev.backend->program_release(&dev, prog);
}

/* Runs convert.cl's `kernel` (convert_fp8, or convert_fp8_half with
 * `wide`) in both access patterns and compares every output with the
 * host's conversions. */
static void check_kernel(convert_bufs *b, const float *f, const char *kernel, int wide)
{
    for (int chunked = 0; chunked < 2; chunked++) {
        gm_program *prog;
        gm_kernel *k = convert_kernel(chunked, kernel, &prog);
        uint64_t n64 = b->n;
        unsigned wide32 = (unsigned)wide;
        gm_arg args[] = {gm_arg_buf(&b->df),  gm_arg_buf(&b->c43), gm_arg_buf(&b->c52),
                         gm_arg_buf(&b->d43), gm_arg_buf(&b->d52), gm_arg_u64(&n64),
                         gm_arg_u32(&wide32)};
        size_t global, local;
        gm_launch_geometry(&dev, chunked, wide ? b->n / 16 : b->n, &global, &local);
        assert_int_equal(dev.backend->launch(&dev, 0, k, global, local, args, strcmp(kernel, "convert_fp8") ? 7 : 6),
                         GM_OK);
        assert_int_equal(dev.backend->copy(&dev, 0, &b->hc43, 0, &b->c43, 0, b->n, false), GM_OK);
        assert_int_equal(dev.backend->copy(&dev, 0, &b->hc52, 0, &b->c52, 0, b->n, false), GM_OK);
        assert_int_equal(dev.backend->copy(&dev, 0, &b->h43, 0, &b->d43, 0, 1024, false), GM_OK);
        assert_int_equal(dev.backend->copy(&dev, 0, &b->h52, 0, &b->d52, 0, 1024, false), GM_OK);
        for (unsigned c = 0; c < 256; c++) {
            float want[2] = {gm_fp8e4m3_to_float((uint8_t)c), gm_fp8e5m2_to_float((uint8_t)c)};
            const float *got[2] = {b->h43.host, b->h52.host};
            for (int fmt = 0; fmt < 2; fmt++) {
                uint32_t x, y;
                memcpy(&x, &want[fmt], 4);
                memcpy(&y, &got[fmt][c], 4);
                /* NaN: any NaN (OpenCL need not keep payloads) */
                if (x != y && !(isnan(want[fmt]) && isnan(got[fmt][c])))
                    fail_msg("%s wide %d: %s decode 0x%02x: host 0x%08x, device 0x%08x", kernel, wide,
                             fmt ? "e5m2" : "e4m3", c, x, y);
            }
        }
        const uint8_t *g43 = b->hc43.host, *g52 = b->hc52.host;
        for (size_t i = 0; i < b->n; i++) {
            if (g43[i] != gm_float_to_fp8e4m3(f[i]))
                fail_msg("%s wide %d: e4m3(%a): host 0x%02x, device 0x%02x", kernel, wide, (double)f[i],
                         gm_float_to_fp8e4m3(f[i]), g43[i]);
            if (g52[i] != gm_float_to_fp8e5m2(f[i]))
                fail_msg("%s wide %d: e5m2(%a): host 0x%02x, device 0x%02x", kernel, wide, (double)f[i],
                         gm_float_to_fp8e5m2(f[i]), g52[i]);
        }
        kernel_done(k, prog);
    }
}

static void test_fp8_device_matches_host(void **state)
{
    (void)state;
    enum { MAX = 1 << 19 };
    float *f = malloc(MAX * sizeof *f);
    assert_non_null(f);
    size_t n = sweep(f, MAX);
    convert_bufs b;
    bufs_open(&b, f, n);
    check_kernel(&b, f, "convert_fp8", 0);
    bufs_close(&b);
    free(f);
    printf("# %zu floats and 2 x 256 codes agree bit for bit\n", n);
}

/* Runs convert_int4_weights over n pairs (w[i], sc[i]); codes and scales come back. */
static void run_int4(int chunked, const float *w, const float *sc, size_t n, int8_t *code, uint16_t *scale)
{
    gm_buffer dw = {0}, ds = {0}, dc = {0}, dh = {0}, h = {0};
    size_t bytes[] = {n * 4, n * 4, n, n * 2};
    gm_buffer *dbufs[] = {&dw, &ds, &dc, &dh};
    for (int i = 0; i < 4; i++)
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, bytes[i], dbufs[i]), GM_OK);
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_HOST, n * 4, &h), GM_OK);
    memcpy(h.host, w, n * 4);
    assert_int_equal(dev.backend->copy(&dev, 0, &dw, 0, &h, 0, n * 4, false), GM_OK);
    memcpy(h.host, sc, n * 4);
    assert_int_equal(dev.backend->copy(&dev, 0, &ds, 0, &h, 0, n * 4, false), GM_OK);
    gm_program *prog;
    gm_kernel *k = convert_kernel(chunked, "convert_int4_weights", &prog);
    uint64_t n64 = n;
    gm_arg args[] = {gm_arg_buf(&dw), gm_arg_buf(&ds), gm_arg_buf(&dc), gm_arg_buf(&dh), gm_arg_u64(&n64)};
    size_t global, local;
    gm_launch_geometry(&dev, chunked, n, &global, &local);
    assert_int_equal(dev.backend->launch(&dev, 0, k, global, local, args, 5), GM_OK);
    assert_int_equal(dev.backend->copy(&dev, 0, &h, 0, &dc, 0, n, false), GM_OK);
    memcpy(code, h.host, n);
    assert_int_equal(dev.backend->copy(&dev, 0, &h, 0, &dh, 0, n * 2, false), GM_OK);
    memcpy(scale, h.host, n * 2);
    kernel_done(k, prog);
    for (int i = 0; i < 4; i++)
        gm_device_free(&dev, dbufs[i]);
    gm_device_free(&dev, &h);
}

static void test_int4_device_matches_host(void **state)
{
    (void)state;
    /* The hashed weights of the workloads at four ranges, and the fp16
     * scales of the groups whose absmax is one of them. */
    enum { RANGES = 4, VALUES = 256 * RANGES };
    const float ranges[RANGES] = {1.0f, 0x1p-3f, 0x1p-7f, 0x1p-12f};
    float values[VALUES], scales[VALUES];
    size_t n_scales = 0;
    for (int r = 0; r < RANGES; r++)
        for (int k = 0; k < 256; k++) {
            float v = (float)(k - 128) * (1.0f / 128.0f) * ranges[r];
            values[r * 256 + k] = v;
            float sc = gm_half_to_float(gm_int4_scale(fabsf(v)));
            bool seen = false;
            for (size_t i = 0; i < n_scales && !seen; i++)
                seen = scales[i] == sc;
            if (!seen)
                scales[n_scales++] = sc;
        }
    size_t n = VALUES * n_scales;
    float *w = malloc(n * sizeof *w), *sc = malloc(n * sizeof *sc);
    int8_t *code = malloc(n);
    uint16_t *scale = malloc(n * sizeof *scale);
    assert_true(w && sc && code && scale);
    for (size_t i = 0; i < n; i++) {
        w[i] = values[i % VALUES];
        sc[i] = scales[i / VALUES];
    }
    for (int chunked = 0; chunked < 2; chunked++) {
        run_int4(chunked, w, sc, n, code, scale);
        for (size_t i = 0; i < n; i++) {
            if (code[i] != gm_int4_code(w[i], sc[i]))
                fail_msg("int4 code of %a at scale %a: host %d, device %d", (double)w[i], (double)sc[i],
                         gm_int4_code(w[i], sc[i]), code[i]);
            if (i < VALUES && scale[i] != gm_int4_scale(fabsf(w[i])))
                fail_msg("int4 scale of absmax %a: host 0x%04x, device 0x%04x", (double)fabsf(w[i]),
                         gm_int4_scale(fabsf(w[i])), scale[i]);
        }
    }
    free(w);
    free(sc);
    free(code);
    free(scale);
    printf("# %d weights x %zu scales: int4 codes and scales agree\n", VALUES, n_scales);
}

/* Runs convert_int8_lanes for the n_s scalars s: the Q15 products
 * (mul[256 t + q + 128]) and the 128 pair sums (pairs[i]: q = 2i - 128
 * and q + 1, each with its partner ~q) come back. */
static void run_int8_lanes(int chunked, const float *s, size_t n_s, int16_t *mul, int32_t *pairs)
{
    gm_buffer ds = {0}, dm = {0}, dp = {0}, h = {0};
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, n_s * 4, &ds), GM_OK);
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, n_s * 512, &dm), GM_OK);
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, 128 * 4, &dp), GM_OK);
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_HOST, n_s * 512, &h), GM_OK);
    memcpy(h.host, s, n_s * 4);
    assert_int_equal(dev.backend->copy(&dev, 0, &ds, 0, &h, 0, n_s * 4, false), GM_OK);
    gm_program *prog;
    gm_kernel *k = convert_kernel(chunked, "convert_int8_lanes", &prog);
    uint64_t n64 = n_s;
    gm_arg args[] = {gm_arg_buf(&ds), gm_arg_buf(&dm), gm_arg_buf(&dp), gm_arg_u64(&n64)};
    size_t global, local;
    gm_launch_geometry(&dev, chunked, n_s * 16, &global, &local);
    assert_int_equal(dev.backend->launch(&dev, 0, k, global, local, args, 4), GM_OK);
    assert_int_equal(dev.backend->copy(&dev, 0, &h, 0, &dm, 0, n_s * 512, false), GM_OK);
    memcpy(mul, h.host, n_s * 512);
    assert_int_equal(dev.backend->copy(&dev, 0, &h, 0, &dp, 0, 128 * 4, false), GM_OK);
    memcpy(pairs, h.host, 128 * 4);
    kernel_done(k, prog);
    gm_buffer *bufs[] = {&ds, &dm, &dp, &h};
    for (int i = 0; i < 4; i++)
        gm_device_free(&dev, bufs[i]);
}

/* The int8 stream kernels' integer lanes (kernels/gm_portable.h), for
 * every int8 q: the Q15 product of q and s is (q k + 2^14) >> 15 with
 * k = s 2^15 rounded, for scalars s across (-1, 1); it is the float
 * definition's rint(s q) wherever s q is further than 2^-9 from a half,
 * one off at most elsewhere, and for the stream suite's s (+-STREAM_SCALAR)
 * at every q. The pair sums are exact. */
static void test_int8_lanes_match_definition(void **state)
{
    (void)state;
    enum { N_S = 72 };
    float s[N_S] = {STREAM_SCALAR, -STREAM_SCALAR, 0.5f, -0.5f, 0.25f, 1.0f / 3.0f, 0.999f, -0.999f,
                    0.0f, 0x1p-15f, 0x1p-16f, 0x1.fffep-1f};
    for (int t = 12; t < N_S; t++)   /* a spread of others, none a simple fraction */
        s[t] = (float)((t * 7919) % 1999 - 999) / 1000.5f;
    static int16_t mul[N_S * 256];
    int32_t pairs[128];
    for (int chunked = 0; chunked < 2; chunked++) {
        run_int8_lanes(chunked, s, N_S, mul, pairs);
        int near_half = 0;
        for (int t = 0; t < N_S; t++) {
            long k = lrintf(s[t] * 32768.0f);
            k = k > 32767 ? 32767 : k < -32767 ? -32767 : k;
            for (int q = -128; q < 128; q++) {
                int got = mul[t * 256 + q + 128];
                long fixed = (q * k + 16384) >> 15;   /* arithmetic shift: gcc and clang */
                if (got != fixed)
                    fail_msg("Q15 %d x %a (k %ld): device %d, definition %ld", q, (double)s[t], k, got, fixed);
                float sq = s[t] * (float)q;
                int want = (int)rintf(sq);
                bool near = fabsf(fabsf(sq - floorf(sq)) - 0.5f) <= 0x1p-9f;
                near_half += near;
                if (got != want && (near == false || abs(got - want) > 1 || t < 2))
                    fail_msg("Q15 %d x %a: device %d, rint %d", q, (double)s[t], got, want);
            }
        }
        for (int i = 0; i < 128; i++) {
            int q0 = 2 * i - 128, q1 = q0 + 1;
            if (pairs[i] != q0 * (-1 - q0) + q1 * (-1 - q1))
                fail_msg("pair %d, %d: device %d, exact %d", q0, q1, pairs[i], q0 * (-1 - q0) + q1 * (-1 - q1));
        }
        if (chunked)
            printf("# %d scalars x 256 int8: Q15 products as defined (%d within 2^-9 of a half), 128 pair sums "
                   "exact\n", N_S, near_half);
    }
}

/* The half-unit conversions (the stream kernels'), one at a time and
 * sixteen at a time, over the same sweep (padded with zeros to whole
 * vectors of 16). */
static void test_fp8_half_units_match_host(void **state)
{
    (void)state;
    enum { MAX = 1 << 19 };
    float *f = calloc(MAX, sizeof *f);
    assert_non_null(f);
    size_t n = (sweep(f, MAX - 16) + 15) / 16 * 16;
    convert_bufs b;
    bufs_open(&b, f, n);
    check_kernel(&b, f, "convert_fp8_half", 0);
    check_kernel(&b, f, "convert_fp8_half", 1);
    bufs_close(&b);
    free(f);
    printf("# half units, one and sixteen at a time: %zu floats and 2 x 256 codes agree bit for bit\n", n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fp8_device_matches_host),
                                       cmocka_unit_test(test_int4_device_matches_host),
                                       cmocka_unit_test(test_fp8_half_units_match_host),
                                       cmocka_unit_test(test_int8_lanes_match_definition)};
    return cmocka_run_group_tests(tests, open_device, close_device);
}
