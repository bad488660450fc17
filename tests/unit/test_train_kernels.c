/*
 * The training kernels (kernels/train.cl through
 * bench/workloads/train_kernels.h, and model.cl's AdamW) on the OpenCL
 * device (PoCL in CI) against their double-precision references
 * (train_ref.h) on the very inputs the device holds, in fp32, fp16 and
 * bf16 and both access patterns. An output is off when it lies further
 * than its storage's rounding (half an ulp: 2^-8 of it in bf16, 2^-11 in
 * fp16) and fp32's arithmetic (4e-6 of it) plus a share of the output's
 * rms for fp32 sums (4e-6 in fp32, 1e-3 in 16-bit); every output must be
 * within. On PoCL the worst output used 0.87 of its bound in bf16, 0.52
 * in fp16, 0.19 in fp32 (attention's).
 * A planted error (GM_TRAIN_FAULT in SwiGLU's backward) must be caught.
 * GM_TRAIN_TEST_BACKEND=cuda runs the same checks on a CUDA card, in the
 * grid access alone (the CUDA build carries chunked images for the stream
 * kernels only: kernels/variants.mk), and without the planted error (it
 * needs a build at run time: OpenCL only).
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

#include "opencl_fixture.h"
#include "bench/bench.h"
#include "bench/workloads/train_kernels.h"
#include "bench/workloads/train_ref.h"
#include "train_random.h"

#define COMBOS 6
static gm_train_kernels built[COMBOS];   /* fp32, fp16, bf16 x grid, chunked */
/* The step through built[]: 1 on OpenCL (both accesses), 2 on CUDA (grid). */
static int combo_step = 1;
static const gm_precision precs[3] = {GM_FP32, GM_FP16, GM_BF16};

/* The OpenCL device (PoCL in CI), or with GM_TRAIN_TEST_BACKEND=cuda the
 * first CUDA device (the same checks on a card), capped at 64MiB. */
static int setup(void **state)
{
    const char *name = getenv("GM_TRAIN_TEST_BACKEND");
    if (!name || !strcmp(name, "opencl")) {
        if (open_device(state))
            return -1;
    } else {
        const gm_backend *b = gm_backend_find(name);
        char why[256];
        int count = 0;
        if (!b || b->probe(&count, why, sizeof why) != GM_OK || count == 0 || gm_device_open(&dev, b, 0) != GM_OK) {
            fprintf(stderr, "GM_TRAIN_TEST_BACKEND=%s: no device\n", name);
            return -1;
        }
        gm_device_set_limit(&dev, 64u << 20);
        combo_step = 2;
    }
    for (int i = 0; i < COMBOS; i += combo_step)
        if (gm_train_kernels_build(&dev, precs[i / 2], i % 2, false, &built[i]) != GM_OK) {
            fprintf(stderr, "train kernels %s: %s\n", gm_precision_name(precs[i / 2]), dev.err.msg);
            return -1;
        }
    return 0;
}

static int teardown(void **state)
{
    for (int i = 0; i < COMBOS; i += combo_step)
        gm_train_kernels_release(&dev, &built[i]);
    return close_device(state);
}

static gm_buffer upload_bytes(const void *src, size_t bytes)
{
    gm_buffer h, d;
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_HOST, bytes, &h), GM_OK);
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, bytes, &d), GM_OK);
    memcpy(h.host, src, bytes);
    assert_int_equal(dev.backend->copy(&dev, 0, &d, 0, &h, 0, bytes, false), GM_OK);
    gm_device_free(&dev, &h);
    return d;
}

/* vals in precision p on the device; vals become the values it holds. */
static gm_buffer upload(gm_precision p, double *vals, size_t n)
{
    size_t e = gm_precision_size(p);
    unsigned char *tmp = malloc(n * e);
    assert_non_null(tmp);
    for (size_t i = 0; i < n; i++) {
        gm_store(p, tmp, i, (float)vals[i], 1.0f);
        vals[i] = gm_load(p, tmp, i, 1.0f);
    }
    gm_buffer d = upload_bytes(tmp, n * e);
    free(tmp);
    return d;
}

static gm_buffer upload_floats(double *vals, size_t n) { return upload(GM_FP32, vals, n); }

/* n values of precision p from d, as floats (freed by the caller). */
static float *download(gm_precision p, gm_buffer *d, size_t n)
{
    size_t e = gm_precision_size(p);
    gm_buffer h;
    assert_int_equal(gm_device_sync(&dev), GM_OK);
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_HOST, n * e, &h), GM_OK);
    assert_int_equal(dev.backend->copy(&dev, 0, &h, 0, d, 0, n * e, false), GM_OK);
    float *out = malloc(n * sizeof *out);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++)
        out[i] = gm_load(p, h.host, i, 1.0f);
    gm_device_free(&dev, &h);
    return out;
}

static double rel_of(gm_precision p) { return p == GM_BF16 ? 0x1p-8 + 4e-6 : p == GM_FP16 ? 0x1p-11 + 4e-6 : 4e-6; }
static double abs_of(gm_precision p) { return p == GM_FP32 ? 4e-6 : 1e-3; }

/* The outputs off the reference: 0 when every one is within. */
static size_t off_count(const char *what, const gm_train_kernels *k, gm_buffer *d, const double *want, size_t n,
                        gm_precision p)
{
    float *got = download(p, d, n);
    gm_ref_diff diff;
    gm_ref_compare(got, want, n, rel_of(p), abs_of(p), &diff);
    if (diff.off)
        fprintf(stderr, "# %s %s%s: %zu of %zu off, worst %g at %zu (got %g, want %g, rms %g)\n", what,
                gm_precision_name(k->prec), k->chunked ? " chunked" : "", diff.off, n, diff.worst, diff.worst_at,
                got[diff.worst_at], want[diff.worst_at], diff.rms);
    free(got);
    assert_true(diff.rms > 1e-6);      /* the check compares something */
    return diff.off;
}

static void expect(const char *what, const gm_train_kernels *k, gm_buffer *d, const double *want, size_t n,
                   gm_precision p)
{
    if (off_count(what, k, d, want, n, p))
        fail_msg("%s %s%s: outputs off the reference", what, gm_precision_name(k->prec), k->chunked ? " chunked" : "");
}

static void release(gm_buffer *b, int n)
{
    for (int i = 0; i < n; i++)
        gm_device_free(&dev, &b[i]);
}

static void test_rope(void **state)
{
    (void)state;
    const size_t tokens = 12, seq = 6, pos0 = 2;
    const unsigned heads = 3, dim = 16;
    const size_t n = tokens * heads * dim, tn = (pos0 + seq) * dim / 2;
    float *cs = malloc(tn * sizeof *cs), *sn = malloc(tn * sizeof *sn);
    gm_train_rope_table(10000.0, dim, pos0 + seq, cs, sn);
    gm_buffer tables[2] = {upload_bytes(cs, tn * 4), upload_bytes(sn, tn * 4)};
    for (int i = 0; i < COMBOS; i += combo_step) {
        gm_train_kernels *k = &built[i];
        for (int dir = 1; dir >= -1; dir -= 2) {
            double *x = randoms(n, 2), *want = malloc(n * sizeof *want);
            gm_buffer d = upload(k->prec, x, n);
            assert_int_equal(gm_train_rope(&dev, k, &d, &tables[0], &tables[1], tokens, heads, dim, seq, pos0, 0,
                                           (float)dir, 0, 0), GM_OK);
            gm_ref_rope(x, want, cs, sn, tokens, heads, dim, seq, pos0, dir);
            expect(dir > 0 ? "rope forward" : "rope backward", k, &d, want, n, k->prec);
            gm_device_free(&dev, &d);
            free(x), free(want);
        }
    }
    release(tables, 2);
    free(cs), free(sn);
}

static void test_rmsnorm(void **state)
{
    (void)state;
    const size_t rows = 5;
    const unsigned width = 40;
    const size_t n = rows * width;
    for (int i = 0; i < COMBOS; i += combo_step) {
        gm_train_kernels *k = &built[i];
        gm_precision p = k->prec;
        double *x = randoms(n, 3), *w = randoms(width, 1), *dy = randoms(n, 1), *dx0 = randoms(n, 1);
        double *dx = malloc(n * sizeof *dx), *dw = malloc(width * sizeof *dw);
        gm_buffer b[6] = {upload(p, x, n), upload(p, w, width), upload(p, dy, n), upload(p, dx0, n)};
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, rows * 4, &b[4]), GM_OK);
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, width * gm_precision_size(p), &b[5]), GM_OK);
        gm_train_norm_call c = {.x = &b[0], .w = &b[1], .dy = &b[2], .dx = &b[3], .rstd = &b[4], .dw = &b[5],
                                .rows = rows, .width = width, .eps = 1e-5f, .accumulate_dx = true};
        assert_int_equal(gm_train_rmsnorm_bwd(&dev, k, &c), GM_OK);
        gm_ref_rmsnorm_bwd(x, w, dy, dx, dw, rows, width, 1e-5);
        for (size_t j = 0; j < n; j++)
            dx[j] += dx0[j];            /* accumulated into the residual's gradient */
        expect("rmsnorm dx", k, &b[3], dx, n, p);
        expect("rmsnorm dw", k, &b[5], dw, width, p);
        release(b, 6);
        free(x), free(w), free(dy), free(dx0), free(dx), free(dw);
    }
}

/* SwiGLU's backward in place over g and u; `fault` builds the kernels with
 * the planted error. Returns the outputs off the reference. */
static size_t swiglu_off(gm_train_kernels *k)
{
    const size_t n = 1000;
    gm_precision p = k->prec;
    double *g = randoms(n, 4), *u = randoms(n, 2), *dp = randoms(n, 1);
    double *dg = malloc(n * sizeof *dg), *du = malloc(n * sizeof *du);
    gm_buffer b[3] = {upload(p, g, n), upload(p, u, n), upload(p, dp, n)};
    const uint64_t off[5] = {0};
    assert_int_equal(gm_train_swiglu_bwd(&dev, k, &b[0], &b[1], &b[2], &b[0], &b[1], n, off), GM_OK);
    gm_ref_swiglu_bwd(g, u, dp, dg, du, n);
    size_t bad = off_count("swiglu dg", k, &b[0], dg, n, p) + off_count("swiglu du", k, &b[1], du, n, p);
    release(b, 3);
    free(g), free(u), free(dp), free(dg), free(du);
    return bad;
}

static void test_swiglu(void **state)
{
    (void)state;
    for (int i = 0; i < COMBOS; i += combo_step)
        assert_int_equal(swiglu_off(&built[i]), 0);
}

/* The planted error is caught: many of its outputs are off. */
static void test_planted_error_caught(void **state)
{
    (void)state;
    if (strcmp(dev.backend->name, "opencl") != 0)
        skip();                        /* CUDA's kernels are built ahead of time, without the fault */
    for (int i = 0; i < COMBOS; i += 2) {
        gm_train_kernels faulty;
        assert_int_equal(gm_train_kernels_build(&dev, precs[i / 2], false, true, &faulty), GM_OK);
        size_t bad = swiglu_off(&faulty);
        gm_train_kernels_release(&dev, &faulty);
        if (bad < 100)
            fail_msg("%s: the planted error in SwiGLU's backward left only %zu of 2000 outputs off",
                     gm_precision_name(precs[i / 2]), bad);
    }
}

/* dim 80 sums its rows in two slices of train.cl's GM_TRAIN_COLS (64). */
static void attention(gm_train_kernels *k, bool causal, unsigned dim)
{
    gm_ref_attn_shape s = {.batch = 2, .seq = 7, .heads = 4, .kv_heads = 2, .dim = dim, .causal = causal};
    const size_t t = s.batch * s.seq, nq = t * s.heads * s.dim, nk = t * s.kv_heads * s.dim, ns = t * s.heads;
    gm_precision p = k->prec;
    double *q = randoms(nq, 1.5), *kk = randoms(nk, 1.5), *v = randoms(nk, 1), *d_o = randoms(nq, 1);
    double *o = malloc(nq * sizeof *o), *lse = malloc(ns * sizeof *lse);
    double *dq = malloc(nq * sizeof *dq), *dk = malloc(nk * sizeof *dk), *dv = malloc(nk * sizeof *dv);
    gm_buffer b[10] = {upload(p, q, nq), upload(p, kk, nk), upload(p, v, nk), upload(p, d_o, nq)};
    gm_ref_attn(&s, q, kk, v, o, lse);
    b[4] = upload(p, o, nq);            /* the forward's output and statistics as the device keeps them */
    b[5] = upload_floats(lse, ns);
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, ns * 4, &b[6]), GM_OK);
    for (int j = 7; j < 10; j++)
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, (j == 7 ? nq : nk) * gm_precision_size(p), &b[j]), GM_OK);
    gm_train_attn_call c = {.q = &b[0], .k = &b[1], .v = &b[2], .d_o = &b[3], .o = &b[4], .lse = &b[5],
                            .delta = &b[6], .dq = &b[7], .dk = &b[8], .dv = &b[9], .batch = s.batch, .seq = s.seq,
                            .heads = s.heads, .kv_heads = s.kv_heads, .dim = s.dim, .causal = causal};
    assert_int_equal(gm_train_attn_bwd(&dev, k, &c), GM_OK);
    gm_ref_attn_bwd(&s, q, kk, v, o, d_o, lse, dq, dk, dv);
    expect(causal ? "attention dq causal" : "attention dq", k, &b[7], dq, nq, p);
    expect(causal ? "attention dk causal" : "attention dk", k, &b[8], dk, nk, p);
    expect(causal ? "attention dv causal" : "attention dv", k, &b[9], dv, nk, p);
    release(b, 10);
    free(q), free(kk), free(v), free(d_o), free(o), free(lse), free(dq), free(dk), free(dv);
}

static void test_attention(void **state)
{
    (void)state;
    for (int i = 0; i < COMBOS; i += combo_step) {
        attention(&built[i], false, 16);
        attention(&built[i], true, 80);
    }
}

static void test_xent(void **state)
{
    (void)state;
    const size_t rows = 6;
    const unsigned vocab = 300;
    const uint32_t targets[6] = {5, 299, GM_TRAIN_IGNORE, 0, 150, 77};
    const double scale = 1.0 / 5;      /* five rows count */
    gm_buffer tb = upload_bytes(targets, sizeof targets);
    for (int i = 0; i < COMBOS; i += combo_step) {
        gm_train_kernels *k = &built[i];
        double *z = randoms(rows * vocab, 8), *dz = malloc(rows * vocab * sizeof *dz), loss[6];
        gm_buffer b[3] = {upload_floats(z, rows * vocab)};
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, rows * vocab * gm_precision_size(k->prec), &b[1]), GM_OK);
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, rows * 4, &b[2]), GM_OK);
        /* fp32 writes the gradient over the logits (in place) */
        gm_buffer *dzb = k->prec == GM_FP32 ? &b[0] : &b[1];
        assert_int_equal(gm_train_xent(&dev, k, &b[0], &tb, dzb, &b[2], rows, vocab, (float)scale, 0, 0), GM_OK);
        double mean = gm_ref_xent(z, targets, rows, vocab, scale, loss, dz);
        expect("cross-entropy loss", k, &b[2], loss, rows, GM_FP32);
        expect("cross-entropy dlogits", k, dzb, dz, rows * vocab, k->prec);
        float *got = download(GM_FP32, &b[2], rows);
        double sum = 0;
        for (size_t r = 0; r < rows; r++)
            sum += got[r];
        assert_true(fabs(sum * scale - mean) <= 1e-5 * mean);
        free(got);
        release(b, 3);
        free(z), free(dz);
    }
    gm_device_free(&dev, &tb);
}

static void test_embed(void **state)
{
    (void)state;
    const size_t n = 40, vocab = 23;
    const unsigned hidden = 10;
    uint32_t tokens[40], order[40], start[41], tok[40];
    for (size_t t = 0; t < n; t++)
        tokens[t] = (uint32_t)((uniform() + 1) / 2 * 12);   /* 12 of 23 ids: repeats */
    size_t segs;
    assert_int_equal(gm_train_embed_segments(tokens, n, vocab, order, start, tok, &segs), 0);
    gm_buffer seg[3] = {upload_bytes(order, sizeof order), upload_bytes(start, sizeof start),
                        upload_bytes(tok, sizeof tok)};
    for (int i = 0; i < COMBOS; i += combo_step) {
        gm_train_kernels *k = &built[i];
        double *dx = randoms(n * hidden, 1), *de0 = randoms(vocab * hidden, 1), *de = malloc(vocab * hidden * 8);
        gm_buffer b[2] = {upload(k->prec, dx, n * hidden), upload(k->prec, de0, vocab * hidden)};
        assert_int_equal(gm_train_embed_bwd(&dev, k, &b[0], &seg[0], &seg[1], &seg[2], &b[1], segs, hidden, true, 0),
                         GM_OK);
        gm_ref_embed_bwd(dx, tokens, de, n, hidden, vocab);
        for (size_t j = 0; j < vocab * hidden; j++)
            de[j] += de0[j];
        expect("embedding de", k, &b[1], de, vocab * hidden, k->prec);
        release(b, 2);
        free(dx), free(de0), free(de);
    }
    release(seg, 3);
}

static void test_nf4(void **state)
{
    (void)state;
    const size_t n = 64 * 300;
    nf4_sample q = nf4_random(n, 0.05);
    double *want = malloc(n * sizeof *want);
    gm_ref_nf4_dequant(q.codes, q.absmax_q, q.code2, q.scale2, q.offset, want, n);
    gm_buffer b[5] = {upload_bytes(q.codes, n / 2), upload_bytes(q.absmax_q, n / 64),
                      upload_bytes(q.code2, sizeof q.code2), upload_bytes(q.scale2, 2 * sizeof *q.scale2)};
    for (int i = 0; i < COMBOS; i += combo_step) {
        gm_train_kernels *k = &built[i];
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, n * gm_precision_size(k->prec), &b[4]), GM_OK);
        assert_int_equal(gm_train_nf4_dequant(&dev, k, &b[0], &b[1], &b[2], &b[3], q.offset, &b[4], n, 0,
                                              (gm_nf4_at){0, 0, 0}), GM_OK);
        expect("nf4 dequantised", k, &b[4], want, n, k->prec);
        gm_device_free(&dev, &b[4]);
    }
    release(b, 4);
    nf4_free(&q);
    free(want);
}

/* AdamW on real gradients: RMSNorm's weight gradient from its backward on
 * the device, then a step over those weights (fp32 master copies in
 * 16-bit), twice, against the reference stepping on the same gradients. */
static void test_adamw(void **state)
{
    (void)state;
    const size_t rows = 8;
    const unsigned width = 64;
    for (int i = 0; i < COMBOS; i += combo_step) {
        gm_train_kernels *k = &built[i];
        gm_precision p = k->prec;
        bool master = p != GM_FP32;
        double *x = randoms(rows * width, 2), *dy = randoms(rows * width, 1), *w = randoms(width, 1);
        double *mw = malloc(width * 8), *mv = calloc(2 * width, 8), *g = malloc(width * 8);
        gm_buffer b[7] = {upload(p, x, rows * width), upload(p, dy, rows * width), upload(p, w, width)};
        memcpy(mw, w, width * 8);
        b[3] = upload_floats(mw, width);
        b[4] = upload_floats(mv, 2 * width);
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, rows * 4, &b[5]), GM_OK);
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, width * gm_precision_size(p), &b[6]), GM_OK);
        gm_buffer dx;
        assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, rows * width * gm_precision_size(p), &dx), GM_OK);
        for (unsigned step = 1; step <= 2; step++) {
            gm_train_norm_call c = {.x = &b[0], .w = &b[2], .dy = &b[1], .dx = &dx, .rstd = &b[5], .dw = &b[6],
                                    .rows = rows, .width = width, .eps = 1e-5f};
            assert_int_equal(gm_train_rmsnorm_bwd(&dev, k, &c), GM_OK);
            float *gd = download(p, &b[6], width);
            for (unsigned j = 0; j < width; j++)
                g[j] = gd[j];
            free(gd);
            gm_adamw_hyper h = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.1f,
                                .step = step};
            assert_int_equal(gm_train_adamw(&dev, k, &b[2], &b[6], master ? &b[3] : NULL, &b[4], width, &h), GM_OK);
            gm_ref_adamw(w, g, master ? mw : NULL, mv, mv + width, width, step, h.lr, h.beta1, h.beta2, h.eps,
                         h.weight_decay);
            expect("adamw weights", k, &b[2], w, width, p);
            if (master)
                expect("adamw master weights", k, &b[3], mw, width, GM_FP32);
            expect("adamw moments", k, &b[4], mv, 2 * width, GM_FP32);
        }
        release(b, 7);
        gm_device_free(&dev, &dx);
        free(x), free(dy), free(w), free(mw), free(mv), free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rope),      cmocka_unit_test(test_rmsnorm),  cmocka_unit_test(test_swiglu),
        cmocka_unit_test(test_planted_error_caught), cmocka_unit_test(test_attention), cmocka_unit_test(test_xent),
        cmocka_unit_test(test_embed),     cmocka_unit_test(test_nf4),      cmocka_unit_test(test_adamw),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
