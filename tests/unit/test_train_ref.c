/*
 * The training kernels' double-precision references
 * (bench/workloads/train_ref.h): each backward against central finite
 * differences of its forward, for a loss L = sum(dy * y) with random dy
 * (so dL/dx is the backward's dx), every input element of small shapes;
 * and the NF4 round trip within its quantisation step.
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

#include "bench/workloads/train_kernels.h"
#include "bench/workloads/train_ref.h"
#include "train_random.h"

static double weighted(const double *y, const double *dy, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += y[i] * dy[i];
    return s;
}

/* The loss at the current inputs: a forward pass and sum(dy * y). */
typedef double (*loss_fn)(void *ctx);

/* dL/dx[i] by central differences for every i, against grad[i]: fails
 * when one differs by more than 1e-6 of the gradient's largest. */
static void check_fd(const char *what, double *x, size_t n, const double *grad, loss_fn loss, void *ctx)
{
    double big = 0;
    for (size_t i = 0; i < n; i++)
        big = fmax(big, fabs(grad[i]));
    assert_true(big > 1e-3);            /* a gradient worth checking */
    for (size_t i = 0; i < n; i++) {
        double keep = x[i], h = 1e-5 * fmax(1.0, fabs(keep));
        x[i] = keep + h;
        double up = loss(ctx);
        x[i] = keep - h;
        double down = loss(ctx);
        x[i] = keep;
        double fd = (up - down) / (2 * h);
        if (fabs(fd - grad[i]) > 1e-6 * big)
            fail_msg("%s[%zu]: backward %.12g, finite difference %.12g", what, i, grad[i], fd);
    }
}

/* ---- rotary embedding ---- */

typedef struct {
    double *x, *y, *dy;
    float *cs, *sn;
    size_t tokens, seq;
    unsigned heads, dim;
} rope_ctx;

static double rope_loss(void *p)
{
    rope_ctx *c = p;
    gm_ref_rope(c->x, c->y, c->cs, c->sn, c->tokens, c->heads, c->dim, c->seq, 3, 1);
    return weighted(c->y, c->dy, c->tokens * c->heads * c->dim);
}

static void test_rope(void **state)
{
    (void)state;
    rope_ctx c = {.tokens = 10, .seq = 5, .heads = 3, .dim = 8};
    size_t n = c.tokens * c.heads * c.dim, pos = 3 + c.seq;
    c.x = randoms(n, 1);
    c.dy = randoms(n, 1);
    c.y = malloc(n * sizeof *c.y);
    c.cs = malloc(pos * c.dim / 2 * sizeof *c.cs);
    c.sn = malloc(pos * c.dim / 2 * sizeof *c.sn);
    double *dx = malloc(n * sizeof *dx);
    gm_train_rope_table(500000.0, c.dim, pos, c.cs, c.sn);
    /* Hugging Face's rotate_half at position 4, pair (1, 5): angle 4 x theta^(-2/8). */
    double angle = 4 * pow(500000.0, -0.25);
    assert_true(fabs(c.cs[4 * 4 + 1] - cos(angle)) < 1e-7 && fabs(c.sn[4 * 4 + 1] - sin(angle)) < 1e-7);
    gm_ref_rope(c.dy, dx, c.cs, c.sn, c.tokens, c.heads, c.dim, c.seq, 3, -1);
    check_fd("rope dx", c.x, n, dx, rope_loss, &c);
    free(c.x), free(c.dy), free(c.y), free(c.cs), free(c.sn), free(dx);
}

/* ---- RMSNorm ---- */

typedef struct {
    double *x, *w, *y, *dy;
    size_t rows;
    unsigned width;
} norm_ctx;

static double norm_loss(void *p)
{
    norm_ctx *c = p;
    gm_ref_rmsnorm(c->x, c->w, c->y, c->rows, c->width, 1e-5);
    return weighted(c->y, c->dy, c->rows * c->width);
}

static void test_rmsnorm(void **state)
{
    (void)state;
    norm_ctx c = {.rows = 6, .width = 24};
    size_t n = c.rows * c.width;
    c.x = randoms(n, 2);
    c.w = randoms(c.width, 1);
    c.dy = randoms(n, 1);
    c.y = malloc(n * sizeof *c.y);
    double *dx = malloc(n * sizeof *dx), *dw = malloc(c.width * sizeof *dw);
    gm_ref_rmsnorm_bwd(c.x, c.w, c.dy, dx, dw, c.rows, c.width, 1e-5);
    check_fd("rmsnorm dx", c.x, n, dx, norm_loss, &c);
    check_fd("rmsnorm dw", c.w, c.width, dw, norm_loss, &c);
    free(c.x), free(c.w), free(c.dy), free(c.y), free(dx), free(dw);
}

/* ---- SwiGLU ---- */

typedef struct {
    double *g, *u, *p, *dp;
    size_t n;
} swiglu_ctx;

static double swiglu_loss(void *p)
{
    swiglu_ctx *c = p;
    gm_ref_swiglu(c->g, c->u, c->p, c->n);
    return weighted(c->p, c->dp, c->n);
}

static void test_swiglu(void **state)
{
    (void)state;
    swiglu_ctx c = {.n = 64};
    c.g = randoms(c.n, 4);
    c.u = randoms(c.n, 2);
    c.dp = randoms(c.n, 1);
    c.p = malloc(c.n * sizeof *c.p);
    double *dg = malloc(c.n * sizeof *dg), *du = malloc(c.n * sizeof *du);
    gm_ref_swiglu_bwd(c.g, c.u, c.dp, dg, du, c.n);
    check_fd("swiglu dg", c.g, c.n, dg, swiglu_loss, &c);
    check_fd("swiglu du", c.u, c.n, du, swiglu_loss, &c);
    free(c.g), free(c.u), free(c.dp), free(c.p), free(dg), free(du);
}

/* ---- attention ---- */

typedef struct {
    gm_ref_attn_shape s;
    double *q, *k, *v, *o, *d_o;
} attn_ctx;

static double attn_loss(void *p)
{
    attn_ctx *c = p;
    gm_ref_attn(&c->s, c->q, c->k, c->v, c->o, NULL);
    return weighted(c->o, c->d_o, c->s.batch * c->s.seq * c->s.heads * c->s.dim);
}

static void attention_fd(bool causal)
{
    attn_ctx c = {.s = {.batch = 2, .seq = 5, .heads = 4, .kv_heads = 2, .dim = 8, .causal = causal}};
    size_t t = c.s.batch * c.s.seq, nq = t * c.s.heads * c.s.dim, nk = t * c.s.kv_heads * c.s.dim;
    c.q = randoms(nq, 1);
    c.k = randoms(nk, 1);
    c.v = randoms(nk, 1);
    c.d_o = randoms(nq, 1);
    c.o = malloc(nq * sizeof *c.o);
    double *lse = malloc(t * c.s.heads * sizeof *lse);
    double *dq = malloc(nq * sizeof *dq), *dk = malloc(nk * sizeof *dk), *dv = malloc(nk * sizeof *dv);
    gm_ref_attn(&c.s, c.q, c.k, c.v, c.o, lse);
    gm_ref_attn_bwd(&c.s, c.q, c.k, c.v, c.o, c.d_o, lse, dq, dk, dv);
    check_fd("attention dq", c.q, nq, dq, attn_loss, &c);
    check_fd("attention dk", c.k, nk, dk, attn_loss, &c);
    check_fd("attention dv", c.v, nk, dv, attn_loss, &c);
    free(c.q), free(c.k), free(c.v), free(c.d_o), free(c.o), free(lse), free(dq), free(dk), free(dv);
}

static void test_attention(void **state)
{
    (void)state;
    attention_fd(false);
    attention_fd(true);
}

/* ---- cross-entropy ---- */

typedef struct {
    double *z;
    uint32_t *targets;
    size_t rows;
    unsigned vocab;
} xent_ctx;

static double xent_loss(void *p)
{
    xent_ctx *c = p;
    return gm_ref_xent(c->z, c->targets, c->rows, c->vocab, 0, NULL, NULL);
}

static void test_xent(void **state)
{
    (void)state;
    uint32_t targets[] = {3, 0, GM_TRAIN_IGNORE, 16, 7};
    xent_ctx c = {.targets = targets, .rows = 5, .vocab = 17};
    c.z = randoms(c.rows * c.vocab, 6);
    double *dz = malloc(c.rows * c.vocab * sizeof *dz), loss[5];
    /* The mean over the 4 counted rows: scale 1/4. */
    double mean = gm_ref_xent(c.z, targets, c.rows, c.vocab, 0.25, loss, dz);
    assert_true(loss[2] == 0 && fabs(mean - (loss[0] + loss[1] + loss[3] + loss[4]) / 4) < 1e-12);
    check_fd("cross-entropy dlogits", c.z, c.rows * c.vocab, dz, xent_loss, &c);
    free(c.z), free(dz);
}

/* ---- embedding ---- */

typedef struct {
    double *e, *x, *dx;
    const uint32_t *tokens;
    size_t n;
    unsigned hidden;
} embed_ctx;

static double embed_loss(void *p)
{
    embed_ctx *c = p;
    gm_ref_embed(c->e, c->tokens, c->x, c->n, c->hidden);
    return weighted(c->x, c->dx, c->n * c->hidden);
}

static void test_embed(void **state)
{
    (void)state;
    const uint32_t tokens[] = {2, 5, 2, 0, 5, 5, 1};
    embed_ctx c = {.tokens = tokens, .n = 7, .hidden = 6};
    size_t vocab = 7;
    c.e = randoms(vocab * c.hidden, 1);
    c.dx = randoms(c.n * c.hidden, 1);
    c.x = malloc(c.n * c.hidden * sizeof *c.x);
    double *de = malloc(vocab * c.hidden * sizeof *de);
    gm_ref_embed_bwd(c.dx, tokens, de, c.n, c.hidden, vocab);
    check_fd("embedding de", c.e, vocab * c.hidden, de, embed_loss, &c);
    /* The host's segments: positions by token, stably. */
    uint32_t order[7], start[8], tok[7];
    size_t segs;
    assert_int_equal(gm_train_embed_segments(tokens, 7, 7, order, start, tok, &segs), 0);
    const uint32_t want_order[] = {3, 6, 0, 2, 1, 4, 5}, want_start[] = {0, 1, 2, 4, 7}, want_tok[] = {0, 1, 2, 5};
    assert_int_equal(segs, 4);
    assert_memory_equal(order, want_order, sizeof want_order);
    assert_memory_equal(start, want_start, sizeof want_start);
    assert_memory_equal(tok, want_tok, sizeof want_tok);
    assert_int_equal(gm_train_embed_segments(tokens, 7, 5, order, start, tok, &segs), -1);
    free(c.e), free(c.dx), free(c.x), free(de);
}

/* ---- NF4 ---- */

static void test_nf4_round_trip(void **state)
{
    (void)state;
    const size_t n = 64 * 300;           /* 300 blocks: two groups of absmax values */
    nf4_sample q = nf4_random(n, 0.05);
    double *w = q.w, *back = malloc(n * sizeof *back);
    const float *code2 = q.code2, *scale2 = q.scale2;
    const uint8_t *absmax_q = q.absmax_q;
    gm_ref_nf4_dequant(q.codes, absmax_q, code2, scale2, q.offset, back, n);
    for (size_t bl = 0; bl < n / 64; bl++) {
        double am = (double)code2[absmax_q[bl]] * scale2[bl / 256] + q.offset, true_am = 0;
        for (size_t i = 0; i < 64; i++)
            true_am = fmax(true_am, fabs(w[bl * 64 + i]));
        /* The absmax within half a step of the second map (2/255 of scale2). */
        assert_true(fabs(am - true_am) <= scale2[bl / 256] / 255.0 + 1e-9);
        /* Each weight within half the widest NF4 gap (0.304) of its block's absmax. */
        for (size_t i = 0; i < 64; i++)
            if (fabs(back[bl * 64 + i] - w[bl * 64 + i]) > 0.153 * am + fabs(am - true_am))
                fail_msg("weight %zu: %g back as %g (absmax %g)", bl * 64 + i, w[bl * 64 + i], back[bl * 64 + i], am);
    }
    /* The even weight sits in the high nibble (bitsandbytes' packing):
     * +absmax is code 15, -absmax code 0, zero code 7. */
    double one[64] = {1.0, -1.0};
    gm_ref_nf4_quantize(one, 64, code2, q.codes, q.absmax_q, q.scale2, &q.offset);
    assert_int_equal(q.codes[0], 0xf0);
    assert_int_equal(q.codes[1], 0x77);
    nf4_free(&q);
    free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rope),      cmocka_unit_test(test_rmsnorm), cmocka_unit_test(test_swiglu),
        cmocka_unit_test(test_attention), cmocka_unit_test(test_xent),    cmocka_unit_test(test_embed),
        cmocka_unit_test(test_nf4_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
