/*
 * The matrix-product dispatch (bench/workloads/matmul.h) against a CPU
 * reference, on the OpenCL device (PoCL in CI) and on a CUDA device where
 * there is one (its tests left out without): every combination of transposes,
 * padded leading dimensions, offsets, a strided batch and a residual (none,
 * another buffer, c itself), in every precision (int8 with int8 codes out
 * and with the exact int32 sums, the 16-bit types and fp8 with an fp32
 * result too), by our kernels and by the vendor's where the context asks
 * for it (CLBlast's SGEMM on OpenCL; cuBLAS and cuBLASLt on CUDA, where
 * every 16-bit and fp32 layout, int8's and fp8's "TN" ones must run on the
 * vendor); rows and batches past the product's, and the padding, stay as
 * they were. The check catches one corrupted element. int4 weights run
 * our fused kernel and, with the vendor and a workspace, dequantised into
 * it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bench/workloads/matmul.h"
#include "bench/bench.h"

/* The devices, OpenCL's and CUDA's (absent: the CUDA tests skip); the
 * tests use `dev`, the one their state names. */
static gm_device devs[2];
static bool have[2];
static gm_device *cur;
#define dev (*cur)

static int open_devices(void **state)
{
    (void)state;
    const gm_backend *bes[2] = {&gm_backend_opencl, NULL};
#ifdef GM_HAVE_CUDA
    bes[1] = &gm_backend_cuda;
#endif
    for (int i = 0; i < 2; i++) {
        char why[256];
        int count = 0;
        if (!bes[i] || bes[i]->probe(&count, why, sizeof why) != GM_OK || count == 0)
            continue;
        if (gm_device_open(&devs[i], bes[i], 0) != GM_OK)
            return -1;
        gm_device_set_limit(&devs[i], 256u << 20);
        have[i] = true;
    }
    return have[0] ? 0 : -1;         /* OpenCL (PoCL) is always there */
}

static int close_devices(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++)
        if (have[i])
            gm_device_close(&devs[i]);
    return 0;
}

/* Points dev at the test's device; false where there is none. */
static bool use(void **state)
{
    int i = *(int *)*state;
    cur = &devs[i];
    return have[i];
}

enum { M = 32, N = 48, K = 64, PAD = 16, OFF = 32, BATCH = 3 };
enum { RES_NONE, RES_OTHER, RES_IN_PLACE, RES_KINDS };

typedef struct {
    bool ta, tb, pad, off, batch;
    int res;
    bool wide;          /* c_fp32, or int8's c_int32 */
} layout;

/* A host matrix of n elements of precision p at `scale`, and its device copy. */
typedef struct {
    size_t n, es;
    void *host;
    float *value;       /* the stored values, as floats */
    gm_buffer mem;
} operand;

static void operand_make(operand *o, gm_precision p, size_t es, size_t n, unsigned seed, float scale)
{
    o->n = n;
    o->es = es;
    o->host = calloc(n, es);
    o->value = calloc(n, sizeof(float));
    assert_true(o->host && o->value);
    for (size_t i = 0; i < n; i++) {
        float v = gm_input_value(i, seed);
        if (es == 4 && p != GM_FP32)
            memcpy((char *)o->host + i * 4, p == GM_INT8 ? &(int32_t){(int32_t)(v * 256)} : (const void *)&v, 4);
        else
            gm_store(p, o->host, i, v, scale);
        o->value[i] = es == 4 && p == GM_INT8 ? (float)(int32_t)(v * 256)
                      : es == 4              ? v
                                             : gm_load(p, o->host, i, scale);
    }
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, n * es, &o->mem), GM_OK);
    gm_buffer src = {.kind = GM_MEM_HOST, .bytes = n * es, .host = o->host};
    assert_int_equal(dev.backend->copy(&dev, 0, &o->mem, 0, &src, 0, n * es, false), GM_OK);
}

static void operand_free(operand *o)
{
    gm_device_free(&dev, &o->mem);
    free(o->host);
    free(o->value);
}

/* A plain m x n x k product c = a op(b), b transposed where bt; no
 * offsets, padding or batch. */
static gm_mm plain_product(gm_precision p, size_t m, size_t n, size_t k, operand *a, operand *b, operand *c, bool bt)
{
    gm_mm op = {.prec = p, .m = m, .n = n, .k = k, .sc = 1.0f};
    op.a = (gm_mm_operand){&a->mem, 0, 0, 0, false};
    op.b = (gm_mm_operand){&b->mem, 0, 0, 0, bt};
    op.c = (gm_mm_operand){&c->mem, 0, 0, 0, false};
    return op;
}

/* Frees a product's three operands and its context. */
static void case_release(gm_mm_ctx *ctx, operand *a, operand *b, operand *c)
{
    operand_free(a);
    operand_free(b);
    operand_free(c);
    gm_mm_ctx_release(ctx);
}

/* Reads c back and compares every element with the reference: the
 * product where it was written, the initial value elsewhere. Returns the
 * number of differences (the first described in note). */
static size_t compare(const gm_mm *op, const operand *a, const operand *b, const operand *c0, const operand *r,
                      const void *got, char *note, size_t len)
{
    gm_precision p = op->prec;
    bool exact = op->c_int32, f32 = op->c_fp32;
    size_t es = c0->es, batch = op->batch > 1 ? op->batch : 1, bad = 0;
    size_t lda = op->a.ld ? op->a.ld : op->a.trans ? op->m : op->k, ldb = op->b.ld ? op->b.ld : op->b.trans ? op->k : op->n;
    size_t ldc = op->c.ld ? op->c.ld : op->n;
    bool *written = calloc(c0->n, sizeof(bool));
    assert_non_null(written);
    for (size_t z = 0; z < batch; z++)
        for (size_t i = 0; i < op->m; i++)
            for (size_t j = 0; j < op->n; j++) {
                double s = 0, mag = 0;
                for (size_t l = 0; l < op->k; l++) {
                    size_t ai = op->a.off + z * op->a.stride + (op->a.trans ? l * lda + i : i * lda + l);
                    size_t bi = op->b.off + z * op->b.stride + (op->b.trans ? j * ldb + l : l * ldb + j);
                    /* int32 sums: of the stored codes themselves. */
                    double pr = exact ? (double)((const int8_t *)a->host)[ai] * ((const int8_t *)b->host)[bi]
                                      : (double)a->value[ai] * b->value[bi];
                    s += pr;
                    mag += fabs(pr);
                }
                size_t at = z * op->c.stride + i * ldc + j, ci = op->c.off + at;
                if (op->r) {
                    double rv = op->r == &c0->mem ? c0->value[ci] : r->value[op->r_off + at];
                    s += rv;
                    mag += fabs(rv);
                }
                double want = s, g;
                if (exact || f32) {
                    int32_t gi;
                    float gf;
                    memcpy(exact ? (void *)&gi : (void *)&gf, (const char *)got + ci * 4, 4);
                    g = exact ? (double)gi : (double)gf;
                } else {
                    unsigned char tmp[4];
                    gm_store(p, tmp, 0, (float)s, op->sc);
                    want = gm_load(p, tmp, 0, op->sc);
                    g = gm_load(p, got, ci, op->sc);
                }
                double tol = exact ? 0.0 : (f32 ? 0.0 : 2.0 * gm_tolerance(p, want, op->sc)) + 2.0 * (double)op->k * 0x1p-24 * mag;
                written[ci] = true;
                if (!(fabs(g - want) <= tol) && bad++ == 0)
                    snprintf(note, len, "c[%zu][%zu][%zu] = %.9g, expected %.9g", z, i, j, g, want);
            }
    for (size_t i = 0; i < c0->n; i++)
        if (!written[i] && memcmp((const char *)got + i * es, (const char *)c0->host + i * es, es) != 0 && bad++ == 0)
            snprintf(note, len, "c element %zu (no product's) changed", i);
    free(written);
    return bad;
}

/* Runs op on the device with c starting as c0 and returns the differences;
 * `corrupt` overwrites one output element first. */
static size_t run_case(gm_mm_ctx *ctx, gm_mm *op, const operand *a, const operand *b, operand *c0, const operand *r,
                       gm_mm_tally *t, bool corrupt, char *note, size_t len)
{
    gm_buffer src = {.kind = GM_MEM_HOST, .bytes = c0->n * c0->es, .host = c0->host};
    assert_int_equal(dev.backend->copy(&dev, 0, &c0->mem, 0, &src, 0, src.bytes, false), GM_OK);
    if (gm_mm_run(ctx, op, t) != GM_OK)
        fail_msg("%s: %s", gm_precision_name(op->prec), dev.err.msg);
    assert_int_equal(dev.backend->synchronize(&dev, 0), GM_OK);
    if (corrupt)
        assert_int_equal(gm_corrupt_bytes(&dev, (gm_buffer *)&c0->mem, (op->c.off + 1) * c0->es, c0->es), GM_OK);
    void *got = malloc(src.bytes);
    assert_non_null(got);
    gm_buffer dst = {.kind = GM_MEM_HOST, .bytes = src.bytes, .host = got};
    assert_int_equal(dev.backend->copy(&dev, 0, &dst, 0, &c0->mem, 0, src.bytes, false), GM_OK);
    size_t bad = compare(op, a, b, c0, r, got, note, len);
    free(got);
    return bad;
}

/* Does the vendor's library take layout L in precision p on this device
 * (what must then have run on it)? */
static bool vendor_takes(gm_precision p, layout L)
{
    bool tn = !L.ta && L.tb, cuda = strcmp(dev.backend->name, "cuda") == 0;
    if (!cuda)      /* CLBlast: SGEMM; HGEMM where the device has fp16 arithmetic, fp16 out */
        return p == GM_FP32 || (p == GM_FP16 && dev.info.has_fp16_native && !L.wide);
    switch (p) {
    case GM_FP32: case GM_FP16: case GM_BF16: return true;
    case GM_INT8: return tn && L.wide;                      /* int32 sums only */
    case GM_FP8E4M3: return tn && dev.info.compute_capability >= 89 && (L.wide || L.res == RES_NONE);
    default: return false;
    }
}

/* Every layout of precision p, the vendor first or not: each against the
 * reference, and with the vendor, each that its library takes run by it.
 * Returns the layouts run. */
static int every_layout(gm_precision p, bool vendor)
{
    gm_mm_ctx ctx;
    if (gm_mm_ctx_init(&ctx, &dev, p, p, vendor) != GM_OK)
        fail_msg("%s: %s", gm_precision_name(p), dev.err.msg);
    size_t es = gm_precision_size(p);
    size_t a_len = 2 * OFF + BATCH * (K + PAD) * (M + PAD), b_len = 2 * OFF + BATCH * (K + PAD) * (N + PAD);
    size_t c_len = 2 * OFF + BATCH * (M + PAD) * (N + PAD);
    float sa = 1.0f / 127.0f, sc = sqrtf((float)K) / 127.0f;
    operand a, b;
    operand_make(&a, p, es, a_len, 1, sa);
    operand_make(&b, p, es, b_len, 2, sa);
    int runs = 0, on_vendor = 0;
    for (int bits = 0; bits < 32 * RES_KINDS * 2; bits++) {
        layout L = {bits & 1, bits & 2, bits & 4, bits & 8, bits & 16, bits / 32 % RES_KINDS, bits / 32 / RES_KINDS};
        if (L.wide && p == GM_FP32)
            continue;                           /* c_fp32 is fp32's own c */
        size_t ce = L.wide ? 4 : es;
        operand c0, r;
        operand_make(&c0, p, ce, c_len, 3, sc);
        operand_make(&r, p, ce, c_len, 4, sc);
        gm_mm op = {.prec = p, .m = M, .n = N, .k = K, .batch = L.batch ? BATCH : 0, .sa = sa, .sb = sa, .sc = sc,
                    .sr = sc, .c_fp32 = L.wide && p != GM_INT8, .c_int32 = L.wide && p == GM_INT8};
        size_t ra = L.ta ? M : K, rb = L.tb ? K : N;
        op.a = (gm_mm_operand){&a.mem, L.off ? OFF : 0, L.pad ? ra + PAD : 0, 0, L.ta};
        op.b = (gm_mm_operand){&b.mem, L.off ? OFF : 0, L.pad ? rb + PAD : 0, 0, L.tb};
        op.c = (gm_mm_operand){&c0.mem, L.off ? OFF : 0, L.pad ? N + PAD : 0, 0, false};
        op.a.stride = (L.ta ? K : M) * (op.a.ld ? op.a.ld : ra) + (L.pad ? PAD : 0);
        op.b.stride = (L.tb ? N : K) * (op.b.ld ? op.b.ld : rb) + (L.pad ? PAD : 0);
        op.c.stride = M * (op.c.ld ? op.c.ld : N) + (L.pad ? PAD : 0);
        op.r = L.res == RES_OTHER ? &r.mem : L.res == RES_IN_PLACE ? &c0.mem : NULL;
        op.r_off = L.res == RES_IN_PLACE ? op.c.off : L.off ? OFF : 0;
        char note[200] = "";
        gm_mm_tally t = {0};
        size_t bad = run_case(&ctx, &op, &a, &b, &c0, &r, &t, false, note, sizeof note);
        bool by_vendor = t.n[GM_MM_VENDOR] == 1;
        if (bad)
            fail_msg("%s layout %d (ta %d tb %d pad %d off %d batch %d residual %d wide %d): %zu wrong, %s (run by "
                     "%s)", gm_precision_name(p), bits, L.ta, L.tb, L.pad, L.off, L.batch, L.res, L.wide, bad, note,
                     by_vendor ? "the vendor" : "ours");
        if (vendor && vendor_takes(p, L) && !by_vendor)
            fail_msg("%s layout %d: the vendor should have run it, ours did (%s)", gm_precision_name(p), bits,
                     ctx.refused);
        if (!vendor)
            assert_int_equal(t.n[GM_MM_VENDOR], 0);
        on_vendor += by_vendor;
        runs++;
        operand_free(&c0);
        operand_free(&r);
    }
    print_message("%s, %s: %d layouts right, %d of them by the vendor%s%s\n", gm_precision_name(p),
                  vendor ? "vendor first" : "ours", runs, on_vendor, ctx.refused[0] ? "; it refused: " : "",
                  ctx.refused);
    operand_free(&a);
    operand_free(&b);
    gm_mm_ctx_release(&ctx);
    return runs;
}

static void test_every_layout_ours(void **state)
{
    assert_true(use(state));
    for (int p = 0; p < GM_PREC_COUNT; p++)
        if (p != GM_INT4)
            assert_int_equal(every_layout((gm_precision)p, false), p == GM_FP32 ? 96 : 192);
}

static void test_every_layout_vendor(void **state)
{
    assert_true(use(state));
    for (int p = 0; p < GM_PREC_COUNT; p++)
        if (p != GM_INT4)
            assert_int_equal(every_layout((gm_precision)p, true), p == GM_FP32 ? 96 : 192);
}

/* A product of odd sizes (no tile or vector divides them), both ways. */
static void test_odd_shape(void **state)
{
    assert_true(use(state));
    for (int v = 0; v < 2; v++) {
        gm_mm_ctx ctx;
        assert_int_equal(gm_mm_ctx_init(&ctx, &dev, GM_BF16, GM_BF16, v), GM_OK);
        operand a, b, c0;
        operand_make(&a, GM_BF16, 2, 13 * 19, 5, 1.0f);
        operand_make(&b, GM_BF16, 2, 19 * 17, 6, 1.0f);
        operand_make(&c0, GM_BF16, 2, 13 * 17, 7, 1.0f);
        gm_mm op = plain_product(GM_BF16, 13, 17, 19, &a, &b, &c0, true);
        char note[200];
        gm_mm_tally t = {0};
        if (run_case(&ctx, &op, &a, &b, &c0, NULL, &t, false, note, sizeof note))
            fail_msg("13 x 17 x 19, %s: %s", v ? "vendor first" : "ours", note);
        case_release(&ctx, &a, &b, &c0);
    }
}

/* The comparison sees one corrupted output element. */
static void test_planted_error_caught(void **state)
{
    assert_true(use(state));
    gm_mm_ctx ctx;
    assert_int_equal(gm_mm_ctx_init(&ctx, &dev, GM_FP32, GM_FP32, true), GM_OK);
    operand a, b, c0;
    operand_make(&a, GM_FP32, 4, M * K, 1, 1.0f);
    operand_make(&b, GM_FP32, 4, K * N, 2, 1.0f);
    operand_make(&c0, GM_FP32, 4, M * N, 3, 1.0f);
    gm_mm op = plain_product(GM_FP32, M, N, K, &a, &b, &c0, false);
    char note[200] = "";
    gm_mm_tally t = {0};
    assert_int_equal(run_case(&ctx, &op, &a, &b, &c0, NULL, &t, false, note, sizeof note), 0);
    assert_int_equal(run_case(&ctx, &op, &a, &b, &c0, NULL, &t, true, note, sizeof note), 1);
    assert_non_null(strstr(note, "c[0][0][1]"));
    case_release(&ctx, &a, &b, &c0);
}

/* int4 weights [k, n] (groups of 16 rows): our fused kernel, and with the
 * vendor first and a workspace, dequantised into it where the vendor has
 * the activations' precision; a decode step's rows (<= fused_rows) stay
 * fused. Checked against the host's dequantised weights. */
static void test_int4_weights(void **state)
{
    assert_true(use(state));
    enum { G = 16 };
    for (int run = 0; run < 6; run++) {
        gm_precision p = run % 2 ? GM_BF16 : GM_FP16;
        bool vendor = run >= 2;
        size_t m = run >= 4 ? 4 : M;
        gm_mm_ctx ctx;
        if (gm_mm_ctx_init(&ctx, &dev, p, GM_INT4, vendor) != GM_OK)
            fail_msg("%s: %s", gm_precision_name(p), dev.err.msg);
        float *w = malloc(K * N * sizeof *w);
        uint8_t *codes = malloc(K * N / 2);
        uint16_t *scales = malloc(K / G * N * 2);
        assert_true(w && codes && scales);
        for (size_t i = 0; i < K * N; i++)
            w[i] = gm_input_value(i, 9);
        gm_int4_quantize(w, K, N, G, codes, scales);
        gm_buffer dw, ds, work, src;
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, K * N / 2, &dw), GM_OK);
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, K / G * N * 2, &ds), GM_OK);
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, K * N * 2, &work), GM_OK);
        src = (gm_buffer){.kind = GM_MEM_HOST, .bytes = K * N / 2, .host = codes};
        assert_int_equal(dev.backend->copy(&dev, 0, &dw, 0, &src, 0, src.bytes, false), GM_OK);
        src = (gm_buffer){.kind = GM_MEM_HOST, .bytes = K / G * N * 2, .host = scales};
        assert_int_equal(dev.backend->copy(&dev, 0, &ds, 0, &src, 0, src.bytes, false), GM_OK);
        ctx.dequant = &work;
        operand a, c0, b;
        operand_make(&a, p, 2, m * K, 1, 1.0f);
        operand_make(&c0, p, 2, m * N, 3, 1.0f);
        /* b's values as the kernels read them, for the reference. */
        b = (operand){.n = K * N, .es = 1, .value = malloc(K * N * sizeof(float))};
        assert_non_null(b.value);
        for (size_t i = 0; i < K * N; i++)
            b.value[i] = gm_int4_load(codes, scales, N, G, i / N, i % N);
        gm_mm op = {.prec = p, .m = m, .n = N, .k = K, .sc = 1.0f, .b_scales = &ds, .group = G};
        op.a = (gm_mm_operand){&a.mem, 0, 0, 0, false};
        op.b = (gm_mm_operand){&dw, 0, 0, 0, false};
        op.c = (gm_mm_operand){&c0.mem, 0, 0, 0, false};
        char note[200];
        gm_mm_tally t = {0};
        if (run_case(&ctx, &op, &a, &b, &c0, NULL, &t, false, note, sizeof note))
            fail_msg("int4 %s %s m %zu: %s", gm_precision_name(p), vendor ? "vendor" : "ours", m, note);
        bool cuda = strcmp(dev.backend->name, "cuda") == 0;
        assert_int_equal(t.n[GM_MM_VENDOR_DEQUANT], vendor && cuda && m > ctx.fused_rows);
        assert_int_equal(t.n[GM_MM_OURS], !(vendor && cuda && m > ctx.fused_rows));
        free(b.value);
        operand_free(&a);
        operand_free(&c0);
        gm_device_free(&dev, &dw);
        gm_device_free(&dev, &ds);
        gm_device_free(&dev, &work);
        free(w);
        free(codes);
        free(scales);
        gm_mm_ctx_release(&ctx);
    }
}

/* What ran, in words, for a row's note. */
static void test_describe(void **state)
{
    assert_true(use(state));
    gm_mm_ctx ctx;
    assert_int_equal(gm_mm_ctx_init(&ctx, &dev, GM_FP32, GM_FP32, true), GM_OK);
    char buf[120];
    const char *vendor = dev.backend->blas_impl(GM_FP32);
    const char *ours = ctx.chunked ? "blocked" : "tiled";
    gm_mm_tally t = {{[GM_MM_VENDOR] = 7}};
    gm_mm_tally_describe(&ctx, &t, buf, sizeof buf);
    assert_string_equal(buf, vendor);
    t.n[GM_MM_OURS] = 2;
    char want[120];
    snprintf(want, sizeof want, "%s 7, %s 2", vendor, ours);
    gm_mm_tally_describe(&ctx, &t, buf, sizeof buf);
    assert_string_equal(buf, want);
    gm_mm_ctx_release(&ctx);
}

static int on_opencl = 0, on_cuda = 1;
#define DEVICE_TESTS(which)                                                                                    \
    cmocka_unit_test_prestate(test_every_layout_ours, &which),                                              \
        cmocka_unit_test_prestate(test_every_layout_vendor, &which),                                        \
        cmocka_unit_test_prestate(test_odd_shape, &which),                                                  \
        cmocka_unit_test_prestate(test_planted_error_caught, &which),                                       \
        cmocka_unit_test_prestate(test_int4_weights, &which), cmocka_unit_test_prestate(test_describe, &which)

int main(void)
{
    /* OpenCL's tests, then CUDA's where there is a CUDA device (a skip in
     * cmocka's TAP reads as a failure to prove, so they are left out). */
    const struct CMUnitTest tests[] = {DEVICE_TESTS(on_opencl), DEVICE_TESTS(on_cuda)};
    size_t n = sizeof tests / sizeof *tests;
    int count = 0;
    char why[256];
#ifdef GM_HAVE_CUDA
    if (gm_backend_cuda.probe(&count, why, sizeof why) != GM_OK)
        count = 0;
#else
    snprintf(why, sizeof why, "built without CUDA");
#endif
    if (count == 0) {
        printf("# no CUDA device (%s): the dispatch is tested on OpenCL alone\n", why);
        n /= 2;
    }
    return _cmocka_run_group_tests("tests", tests, n, open_devices, close_devices);
}
