/* Whole-output checksums of a matrix product on the device (bench/workloads/product_device_check.h). */
#include "bench/workloads/product_device_check.h"

#include "bench/workloads/abft_kit.h"

#include "bench/bench.h"
#include "bench/model/precision_roles.h"
#include "bench/workloads/device_check.h"
#include "bench/workloads/product_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define U32 0x1p-24

gm_status gm_abft_init(gm_abft *x, gm_device *dev, gm_precision prec, gm_precision wprec, bool chunked,
                       uint64_t limit)
{
    *x = (gm_abft){.dev = dev, .prec = prec, .wprec = wprec, .chunked = chunked, .limit = limit};
    char variant[48];
    gm_role_variant(prec, wprec, prec, chunked, variant, sizeof variant);
    static const char *const names[] = {"abft_block_sums", "abft_block_norms", "abft_col_norms",
                                        "abft_expect",     "abft_compare",     "abft_locate",
                                        "abft_block_before"};
    gm_kernel **const ks[] = {&x->k_sums,    &x->k_norms,  &x->k_cols, &x->k_expect,
                              &x->k_compare, &x->k_locate, &x->k_before};
    gm_status rc = gm_abft_kit_build(dev, variant, names, ks, sizeof names / sizeof *names, &x->prog);
    if (rc != GM_OK)
        *x = (gm_abft){0};
    return rc;
}

void gm_abft_free_scratch(gm_abft *x)
{
    gm_buffer *const bs[] = {&x->s, &x->e, &x->abs_sum, &x->split, &x->norms, &x->cn, &x->diag, &x->verdict, &x->pre};
    gm_abft_kit_free(x->dev, bs, sizeof bs / sizeof *bs);
}

void gm_abft_release(gm_abft *x)
{
    if (!x->dev)
        return;
    gm_abft_free_scratch(x);
    gm_kernel *const ks[] = {x->k_sums, x->k_norms, x->k_cols, x->k_expect, x->k_compare, x->k_locate, x->k_before};
    gm_abft_kit_release(x->dev, x->prog, ks, sizeof ks / sizeof *ks);
    *x = (gm_abft){0};
}

static gm_status reserve(gm_abft *x, gm_buffer *buf, size_t bytes)
{
    return gm_abft_kit_reserve(x->dev, buf, bytes);
}

static gm_status launch(gm_abft *x, gm_kernel *k, size_t items, gm_arg *args, int n)
{
    return gm_abft_kit_launch(x->dev, x->chunked, k, items, args, n);
}

/* The bounds' terms of one product (product_device_check.h). */
typedef struct {
    float u_out, out_abs, u_r, u_sum, coef_mag, u_e, row_abs, slack;
    double u_acc, a_abs, u_b;
} bounds;

static bounds bounds_of(const gm_abft *x, const gm_mm *op, uint64_t g, bool half_sums, bool b_rounded)
{
    gm_precision out = op->c_fp32 ? GM_FP32 : op->prec;
    double k = (double)op->k, u_acc = half_sums ? 0x1p-11 : U32;
    bounds b = {.u_acc = u_acc, .a_abs = half_sums ? k * U32 : 0.0,
                .u_b = b_rounded ? gm_unit_roundoff(x->prec) : 0.0};
    b.u_out = (float)(0.5 * gm_tolerance(out, 1.0, 1.0f));
    b.out_abs = (float)(0.5 * gm_tolerance(out, 0.0, 1.0f));
    b.u_r = (float)u_acc;
    b.u_sum = (float)(((double)g + 2.0) * U32);
    b.u_e = (float)U32;
    b.slack = (float)(1.001 * (1.0 + (k + 4.0) * U32));
    return b;
}

/* Reads `bytes` of buf from byte `at` into p. */
static gm_status read_back(gm_device *dev, const gm_buffer *buf, size_t at, void *p, size_t bytes)
{
    gm_buffer host = {.kind = GM_MEM_HOST, .bytes = bytes, .host = p};
    return dev->backend->copy(dev, 0, &host, 0, buf, at, bytes, false);
}

/* The rows of column j in [row0, row0 + count) recomputed (abft_locate). */
static gm_status locate(gm_abft *x, const gm_mm *op, const bounds *bd, uint64_t row0, uint64_t count, uint64_t j,
                        gm_abft_finding *f)
{
    unsigned int k = (unsigned int)op->k, n = (unsigned int)op->n, wgroup = op->b_scales ? op->group : 1;
    unsigned int b_trans = op->b.trans, c_fp32 = op->c_fp32, has_r = op->r != NULL;
    uint64_t none = op->m, r_off = op->r ? op->r_off : 0;
    const gm_buffer *wscale = op->b_scales ? op->b_scales : op->b.buf, *r = op->r ? op->r : op->c.buf;
    float sa = op->sa, sb = op->sb, sc = op->sc;
    float coef = (float)(2.0 * (double)k * (bd->u_acc + U32) + bd->u_b), u_r = (float)(bd->u_acc + U32);
    float row_abs = (float)bd->a_abs;
    unsigned int a_trans = op->a.trans;
    uint64_t rows = op->m;
    gm_arg args[] = {gm_arg_buf(op->a.buf), gm_arg_buf(op->b.buf), gm_arg_buf(wscale), gm_arg_buf(op->c.buf),
                     gm_arg_buf(op->c.buf), gm_arg_buf(r), gm_arg_buf(r), gm_arg_buf(&x->verdict),
                     gm_arg_u64(&op->a.off), gm_arg_u64(&op->b.off), gm_arg_u64(&op->c.off), gm_arg_u64(&r_off),
                     gm_arg_u64(&row0), gm_arg_u64(&count), gm_arg_u64(&j), gm_arg_u64(&none), gm_arg_u32(&k),
                     gm_arg_u32(&n), gm_arg_u32(&wgroup), gm_arg_u32(&b_trans), gm_arg_u32(&c_fp32),
                     gm_arg_u32(&has_r), gm_arg_f32(&sa), gm_arg_f32(&sb), gm_arg_f32(&sc),
                     gm_arg_f32(&bd->u_out), gm_arg_f32(&bd->out_abs), gm_arg_f32(&u_r), gm_arg_f32(&coef),
                     gm_arg_f32(&row_abs), gm_arg_f32(&bd->slack), gm_arg_u32(&a_trans), gm_arg_u64(&rows)};
    gm_device_verdict v;
    gm_status rc = gm_device_check_run(x->dev, x->k_locate, x->chunked, (size_t)count, args,
                                       (int)(sizeof args / sizeof *args), 7, &x->verdict, none, &v);
    if (rc == GM_OK && v.wrong) {
        f->located = true;
        f->row = v.first;
    }
    return rc;
}

/* The rows a block's column sum covers for op's output: gm_product_group's
 * rule for the output's rounding (64 fp32 and fp16, 8 bf16, 1 fp8), at
 * most GM_ABFT_GROUP_MAX. Not its host budget, which widens the blocks of
 * a large product to bound the host's work: here the expected sums run on
 * the device in chunks, and wider blocks would only raise the tolerance
 * (a 16384-row bf16 product would get 64 rows a block, not 8). */
static uint64_t block_rows(const gm_mm *op)
{
    double u_out = 0.5 * gm_tolerance(op->c_fp32 ? GM_FP32 : op->prec, 1.0, 1.0f);
    uint64_t g = gm_product_group(GM_ABFT_GROUP_MAX, 1, 1, u_out, 0);   /* k = n = 1: no budget */
    return g < op->m ? g : op->m;
}

/* op adds itself to c in place (r at c's own place). */
static bool in_place(const gm_mm *op)
{
    return op->r && op->r == op->c.buf && op->r_off == op->c.off;
}

gm_status gm_abft_before(gm_abft *x, const gm_mm *op)
{
    x->pre_for = (gm_mm){0};
    if (!in_place(op))
        return GM_OK;
    uint64_t g = block_rows(op), nb = (op->m + g - 1) / g;
    unsigned int nu = (unsigned int)op->n, gu = (unsigned int)g, nbu = (unsigned int)nb, c_fp32 = op->c_fp32;
    float sc = op->sc;
    gm_status rc = reserve(x, &x->pre, (size_t)(nb * op->n * 8));
    if (rc == GM_OK) {
        gm_arg args[] = {gm_arg_buf(op->c.buf), gm_arg_buf(op->c.buf), gm_arg_buf(&x->pre), gm_arg_u64(&op->c.off),
                         gm_arg_u64(&op->m),    gm_arg_u32(&nu),       gm_arg_u32(&gu),     gm_arg_u32(&nbu),
                         gm_arg_u32(&c_fp32),   gm_arg_f32(&sc)};
        rc = launch(x, x->k_before, (size_t)(nb * op->n), args, 10);
    }
    if (rc == GM_OK)
        x->pre_for = *op;
    return rc;
}

gm_status gm_abft_check(gm_abft *x, gm_mm_ctx *mm, const gm_mm *op, bool half_sums, bool b_rounded,
                        gm_abft_finding *f)
{
    gm_device *dev = x->dev;
    *f = (gm_abft_finding){.ok = true};
    if (op->prec != GM_FP32 && op->prec != GM_FP16 && op->prec != GM_BF16 && !GM_PREC_IS_FP8(op->prec)) {
        snprintf(f->why, sizeof f->why, "no device checksums for %s products", gm_precision_name(op->prec));
        return GM_OK;
    }
    if ((op->batch > 1) || op->a.ld || op->c.ld || op->b.ld || op->c_int32 || (op->b_scales && op->b.trans)
        || (op->b_scales && op->a.trans)) {
        snprintf(f->why, sizeof f->why, "no device checksums for this product's layout");
        return GM_OK;
    }
    /* In place: the sums gm_abft_before took of this very product's c. */
    bool pre = in_place(op);
    const gm_mm *was = &x->pre_for;
    if (pre && !(was->c.buf == op->c.buf && was->c.off == op->c.off && was->m == op->m && was->n == op->n
                 && was->k == op->k && was->prec == op->prec && was->c_fp32 == op->c_fp32)) {
        snprintf(f->why, sizeof f->why, "no sums of the output before a product added to it in place");
        return GM_OK;
    }
    x->pre_for = (gm_mm){0};
    uint64_t m = op->m, n = op->n, k = op->k;
    uint64_t g = block_rows(op);
    uint64_t nb = (m + g - 1) / g;
    bool s32 = op->b_scales != NULL;           /* fp32 rows and abft_expect */
    unsigned int parts = s32 || op->prec == GM_FP32 ? 1 : 2;
    size_t es = s32 ? 4 : gm_precision_size(op->prec);
    /* Scratch a block of rows: S, E, the |A| sums and misses, norms, diag. */
    uint64_t per_block = parts * k * es + parts * n * 4 + 2 * k * 4 + 8 + 2 * n * 4;
    uint64_t fixed = n * 4, room = x->limit > fixed ? x->limit - fixed : 0;
    uint64_t chunk = room / per_block ? room / per_block : 1;
    chunk = chunk < nb ? chunk : nb;
    f->group = g;
    gm_status rc = reserve(x, &x->s, (size_t)(chunk * parts * k * es));
    if (rc == GM_OK)
        rc = reserve(x, &x->e, (size_t)(chunk * parts * n * 4));
    if (rc == GM_OK)
        rc = reserve(x, &x->abs_sum, (size_t)(chunk * k * 4));
    if (rc == GM_OK)
        rc = reserve(x, &x->split, (size_t)(chunk * k * 4));
    if (rc == GM_OK)
        rc = reserve(x, &x->norms, (size_t)(chunk * 8));
    if (rc == GM_OK)
        rc = reserve(x, &x->cn, (size_t)(n * 4));
    if (rc == GM_OK)
        rc = reserve(x, &x->diag, (size_t)(chunk * n * 8));
    if (rc == GM_OK && !pre)        /* an argument of abft_compare all the same */
        rc = reserve(x, &x->pre, 4);
    if (rc != GM_OK) {
        snprintf(f->why, sizeof f->why, "no device memory for the checksums' scratch (%.100s)", dev->err.msg);
        gm_abft_free_scratch(x);
        return rc;
    }
    unsigned int ku = (unsigned int)k, nu = (unsigned int)n, gu = (unsigned int)g;
    unsigned int wgroup = op->b_scales ? op->group : 1, b_trans = op->b.trans, s32u = s32;
    const gm_buffer *wscale = op->b_scales ? op->b_scales : op->b.buf;
    float sb = op->sb, sa = op->sa;
    unsigned int a_trans = op->a.trans, has_pre = pre;
    {
        gm_arg args[] = {gm_arg_buf(op->b.buf), gm_arg_buf(wscale), gm_arg_buf(&x->cn), gm_arg_u32(&ku),
                         gm_arg_u32(&nu), gm_arg_u64(&op->b.off), gm_arg_u32(&wgroup), gm_arg_u32(&b_trans),
                         gm_arg_f32(&sb)};
        rc = launch(x, x->k_cols, (size_t)n, args, 9);
    }
    bounds bd = bounds_of(x, op, g, half_sums, b_rounded);
    for (uint64_t b0 = 0; b0 < nb && rc == GM_OK && f->ok; b0 += chunk) {
        unsigned int nbc = (unsigned int)(nb - b0 < chunk ? nb - b0 : chunk);
        uint64_t first_row = b0 * g;
        gm_arg sums[] = {gm_arg_buf(op->a.buf), gm_arg_buf(&x->s), gm_arg_buf(&x->s), gm_arg_buf(&x->abs_sum),
                         gm_arg_buf(&x->split), gm_arg_u64(&op->a.off), gm_arg_u64(&first_row), gm_arg_u64(&m),
                         gm_arg_u32(&ku), gm_arg_u32(&gu), gm_arg_u32(&nbc), gm_arg_u32(&parts), gm_arg_u32(&s32u),
                         gm_arg_f32(&sa), gm_arg_u32(&a_trans)};
        rc = launch(x, x->k_sums, (size_t)nbc * k, sums, 15);
        if (rc == GM_OK) {
            gm_arg args[] = {gm_arg_buf(&x->abs_sum), gm_arg_buf(&x->split), gm_arg_buf(&x->norms), gm_arg_u32(&ku),
                             gm_arg_u32(&nbc)};
            rc = launch(x, x->k_norms, nbc, args, 5);
        }
        /* E = S B: abft_expect for int4 weights, else the product's own dispatch. */
        unsigned int rows_e = parts * nbc;
        bool want_half = false;
        if (rc == GM_OK && s32) {
            gm_arg args[] = {gm_arg_buf(&x->s),   gm_arg_buf(op->b.buf), gm_arg_buf(wscale),       gm_arg_buf(&x->e),
                             gm_arg_u32(&rows_e), gm_arg_u32(&ku),       gm_arg_u32(&nu),          gm_arg_u64(&op->b.off),
                             gm_arg_u32(&wgroup), gm_arg_u32(&b_trans),  gm_arg_f32(&sb)};
            rc = launch(x, x->k_expect, (size_t)rows_e * n, args, 11);
        } else if (rc == GM_OK) {
            gm_mm want = {.prec = op->prec, .m = rows_e, .n = n, .k = k, .c_fp32 = op->prec != GM_FP32,
                          .sa = 1.0f, .sb = op->sb, .sc = 1.0f, .sr = 1.0f};
            want.a = (gm_mm_operand){&x->s, 0, 0, 0, false};
            want.b = op->b;
            want.c = (gm_mm_operand){&x->e, 0, 0, 0, false};
            char refused[sizeof mm->refused];
            memcpy(refused, mm->refused, sizeof refused);
            rc = gm_mm_run(mm, &want, NULL);
            memcpy(mm->refused, refused, sizeof refused);
            want_half = mm->last_half_sums;
        }
        /* The expected side's terms: s's fp32 sums, E's k-term sums. */
        double u_w = want_half ? 0x1p-11 : U32;
        float coef_mag = (float)(2.0 * (double)k * bd.u_acc + ((double)g - 1.0) * U32
                                 + (1.0 + 2.0 * gm_unit_roundoff(op->prec) + (double)g * U32) * 1.02 * 2.0 * (double)k * u_w
                                 + bd.u_b);
        float row_abs = (float)(bd.a_abs + (want_half ? (double)parts * (double)k * U32 : 0.0));
        unsigned int c_fp32 = op->c_fp32, has_r = op->r != NULL && !pre;
        uint64_t r_off = op->r ? op->r_off : 0, none = nb * n;
        const gm_buffer *r = op->r ? op->r : op->c.buf;
        float sc = op->sc;
        gm_arg cmp[] = {gm_arg_buf(op->c.buf),    gm_arg_buf(op->c.buf),    gm_arg_buf(r),
                        gm_arg_buf(r),            gm_arg_buf(&x->e),        gm_arg_buf(&x->norms),
                        gm_arg_buf(&x->cn),       gm_arg_buf(&x->diag),     gm_arg_buf(&x->verdict),
                        gm_arg_u64(&op->c.off),   gm_arg_u64(&r_off),       gm_arg_u64(&first_row),
                        gm_arg_u64(&m),           gm_arg_u64(&b0),          gm_arg_u64(&none),
                        gm_arg_u32(&nu),          gm_arg_u32(&gu),          gm_arg_u32(&nbc),
                        gm_arg_u32(&parts),       gm_arg_u32(&c_fp32),      gm_arg_u32(&has_r),
                        gm_arg_f32(&sc),          gm_arg_f32(&bd.u_out),    gm_arg_f32(&bd.out_abs),
                        gm_arg_f32(&bd.u_r),      gm_arg_f32(&bd.u_sum),    gm_arg_f32(&coef_mag),
                        gm_arg_f32(&bd.u_e),      gm_arg_f32(&row_abs),     gm_arg_f32(&bd.slack),
                        gm_arg_buf(&x->pre),      gm_arg_u32(&has_pre)};
        gm_device_verdict v;
        if (rc == GM_OK)
            rc = gm_device_check_run(dev, x->k_compare, x->chunked, (size_t)nbc * n, cmp,
                                     (int)(sizeof cmp / sizeof *cmp), 8, &x->verdict, none, &v);
        if (rc != GM_OK || !v.wrong)
            continue;
        /* The first failing sum: its difference and tolerance, then its rows. */
        uint64_t block = v.first / n, col = v.first % n;
        float d[2];
        rc = read_back(dev, &x->diag, (size_t)(((block - b0) * n + col) * 8), d, sizeof d);
        f->ok = false;
        f->in_place = pre;
        f->col = col;
        f->row_first = block * g;
        f->row_last = (block + 1) * g < m ? (block + 1) * g - 1 : m - 1;
        f->diff = d[0];
        f->tol = d[1];
        if (rc == GM_OK && !pre)
            rc = locate(x, op, &bd, f->row_first, f->row_last + 1 - f->row_first, col, f);
    }
    if (rc == GM_OK)
        rc = dev->backend->synchronize(dev, 0);
    f->checked = rc == GM_OK;
    if (rc != GM_OK)
        snprintf(f->why, sizeof f->why, "the checksums failed to run (%.120s)", dev->err.msg);
    return rc;
}
