/* Whole-output checksums of an int8 product on the device (bench/workloads/product_device_check_int8.h). */
#include "bench/workloads/product_device_check_int8.h"

#include "bench/workloads/abft_kit.h"

#include "bench/bench.h"
#include "bench/model/precision_roles.h"
#include "bench/workloads/device_check.h"

#include <stdio.h>

#define U32 0x1p-24
/* The largest k whose exact sum of codes' products fits int32: 127^2 k < 2^31. */
#define K_MAX 133143u
/* Rows of E a work item of abft_i8_expect computes (kernels/abft.cl's ABFT_I8_ROWS). */
#define EXPECT_ROWS 8

gm_status gm_abft_i8_init(gm_abft_i8 *x, gm_device *dev, bool chunked, uint64_t limit)
{
    *x = (gm_abft_i8){.dev = dev, .chunked = chunked, .limit = limit};
    char variant[48];
    gm_role_variant(GM_INT8, GM_INT8, GM_INT8, chunked, variant, sizeof variant);
    static const char *const names[] = {"abft_i8_block_sums", "abft_block_norms", "abft_col_norms",
                                        "abft_i8_expect",     "abft_i8_compare",  "abft_i8_locate"};
    gm_kernel **const ks[] = {&x->k_sums, &x->k_norms, &x->k_cols, &x->k_expect, &x->k_compare, &x->k_locate};
    gm_status rc = gm_abft_kit_build(dev, variant, names, ks, sizeof names / sizeof *names, &x->prog);
    if (rc != GM_OK)
        *x = (gm_abft_i8){0};
    return rc;
}

void gm_abft_i8_free_scratch(gm_abft_i8 *x)
{
    gm_buffer *const bs[] = {&x->s, &x->e, &x->abs_sum, &x->split, &x->norms, &x->cn, &x->diag, &x->verdict};
    gm_abft_kit_free(x->dev, bs, sizeof bs / sizeof *bs);
}

void gm_abft_i8_release(gm_abft_i8 *x)
{
    if (!x->dev)
        return;
    gm_abft_i8_free_scratch(x);
    gm_kernel *const ks[] = {x->k_sums, x->k_norms, x->k_cols, x->k_expect, x->k_compare, x->k_locate};
    gm_abft_kit_release(x->dev, x->prog, ks, sizeof ks / sizeof *ks);
    *x = (gm_abft_i8){0};
}

static gm_status reserve(gm_abft_i8 *x, gm_buffer *buf, size_t bytes)
{
    return gm_abft_kit_reserve(x->dev, buf, bytes);
}

static gm_status launch(gm_abft_i8 *x, gm_kernel *k, size_t items, gm_arg *args, int n)
{
    return gm_abft_kit_launch(x->dev, x->chunked, k, items, args, n);
}

/* The bounds' coefficients of one product (product_device_check_int8.h). */
typedef struct {
    float coef_mag, u_sum, u_e, slack;
} bounds;

static bounds bounds_of(const gm_mm *op, uint64_t g)
{
    double k = (double)op->k;
    return (bounds){.coef_mag = (float)(1.02 * 2.0 * (k + 3.0) * U32), .u_sum = (float)(((double)g + 2.0) * U32),
                    .u_e = (float)(6.0 * U32), .slack = (float)(1.001 * (1.0 + (k + 4.0) * U32))};
}

/* Why op is not covered, or NULL. */
static const char *not_covered(const gm_mm *op)
{
    if (op->prec != GM_INT8)
        return "no int8 device checksums for this precision";
    if (op->b_scales)
        return "no device checksums for int8 products of int4 weights";
    if (op->batch > 1 || op->a.trans || op->a.ld || op->c.ld || op->b.ld || op->c_int32
        || (op->r && (op->c_fp32 || (op->r == op->c.buf && op->r_off == op->c.off))))
        return "no device checksums for this product's layout";
    if (op->k > K_MAX)
        return "no device checksums for int8 products of k past 133143 (an element's sum would pass int32)";
    return NULL;
}

/* The rows of column j in [row0, row0 + count) recomputed (abft_i8_locate). */
static gm_status locate(gm_abft_i8 *x, const gm_mm *op, const bounds *bd, uint64_t row0, uint64_t count, uint64_t j,
                        gm_abft_finding *f)
{
    unsigned int k = (unsigned int)op->k, n = (unsigned int)op->n, b_trans = op->b.trans, c_fp32 = op->c_fp32;
    unsigned int has_r = op->r != NULL;
    uint64_t none = op->m, r_off = op->r ? op->r_off : 0;
    const gm_buffer *r = op->r ? op->r : op->c.buf;
    float sa = op->sa, sb = op->sb, sc = op->sc, sr = op->sr;
    gm_arg args[] = {gm_arg_buf(op->a.buf), gm_arg_buf(op->b.buf), gm_arg_buf(op->c.buf), gm_arg_buf(op->c.buf),
                     gm_arg_buf(r), gm_arg_buf(&x->verdict), gm_arg_u64(&op->a.off), gm_arg_u64(&op->b.off),
                     gm_arg_u64(&op->c.off), gm_arg_u64(&r_off), gm_arg_u64(&row0), gm_arg_u64(&count),
                     gm_arg_u64(&j), gm_arg_u64(&none), gm_arg_u32(&k), gm_arg_u32(&n), gm_arg_u32(&b_trans),
                     gm_arg_u32(&c_fp32), gm_arg_u32(&has_r), gm_arg_f32(&sa), gm_arg_f32(&sb), gm_arg_f32(&sc),
                     gm_arg_f32(&sr), gm_arg_f32(&bd->coef_mag), gm_arg_f32(&bd->u_e), gm_arg_f32(&bd->slack)};
    gm_device_verdict v;
    gm_status rc = gm_device_check_run(x->dev, x->k_locate, x->chunked, (size_t)count, args,
                                       (int)(sizeof args / sizeof *args), 5, &x->verdict, none, &v);
    if (rc == GM_OK && v.wrong) {
        f->located = true;
        f->row = v.first;
    }
    return rc;
}

gm_status gm_abft_i8_check(gm_abft_i8 *x, const gm_mm *op, gm_abft_finding *f)
{
    gm_device *dev = x->dev;
    *f = (gm_abft_finding){.ok = true};
    const char *why = not_covered(op);
    if (why) {
        snprintf(f->why, sizeof f->why, "%s", why);
        return GM_OK;
    }
    uint64_t m = op->m, n = op->n, k = op->k;
    uint64_t g = m < GM_ABFT_I8_GROUP ? m : GM_ABFT_I8_GROUP;
    uint64_t nb = (m + g - 1) / g;
    /* Scratch a block of rows: S's two code rows, E's two int32 rows, the
     * |A| sums and their zero misses, norms, diag. */
    uint64_t per_block = 2 * k + 2 * n * 4 + 2 * k * 4 + 8 + 2 * n * 4;
    uint64_t fixed = n * 4, room = x->limit > fixed ? x->limit - fixed : 0;
    uint64_t chunk = room / per_block ? room / per_block : 1;
    chunk = chunk < nb ? chunk : nb;
    f->group = g;
    gm_status rc = reserve(x, &x->s, (size_t)(chunk * 2 * k));
    if (rc == GM_OK)
        rc = reserve(x, &x->e, (size_t)(chunk * 2 * n * 4));
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
    if (rc != GM_OK) {
        snprintf(f->why, sizeof f->why, "no device memory for the checksums' scratch (%.100s)", dev->err.msg);
        gm_abft_i8_free_scratch(x);
        return rc;
    }
    unsigned int ku = (unsigned int)k, nu = (unsigned int)n, gu = (unsigned int)g, wgroup = 1;
    unsigned int b_trans = op->b.trans, c_fp32 = op->c_fp32, has_r = op->r != NULL;
    float sa = op->sa, sb = op->sb, sc = op->sc, sr = op->sr;
    {
        gm_arg args[] = {gm_arg_buf(op->b.buf), gm_arg_buf(op->b.buf), gm_arg_buf(&x->cn), gm_arg_u32(&ku),
                         gm_arg_u32(&nu), gm_arg_u64(&op->b.off), gm_arg_u32(&wgroup), gm_arg_u32(&b_trans),
                         gm_arg_f32(&sb)};
        rc = launch(x, x->k_cols, (size_t)n, args, 9);
    }
    bounds bd = bounds_of(op, g);
    uint64_t r_off = op->r ? op->r_off : 0, none = nb * n;
    const gm_buffer *r = op->r ? op->r : op->c.buf;
    for (uint64_t b0 = 0; b0 < nb && rc == GM_OK && f->ok; b0 += chunk) {
        unsigned int nbc = (unsigned int)(nb - b0 < chunk ? nb - b0 : chunk);
        uint64_t first_row = b0 * g;
        gm_arg sums[] = {gm_arg_buf(op->a.buf), gm_arg_buf(&x->s), gm_arg_buf(&x->abs_sum), gm_arg_buf(&x->split),
                         gm_arg_u64(&op->a.off), gm_arg_u64(&first_row), gm_arg_u64(&m), gm_arg_u32(&ku),
                         gm_arg_u32(&gu), gm_arg_u32(&nbc), gm_arg_f32(&sa)};
        rc = launch(x, x->k_sums, (size_t)nbc * k, sums, 11);
        if (rc == GM_OK) {
            gm_arg args[] = {gm_arg_buf(&x->abs_sum), gm_arg_buf(&x->split), gm_arg_buf(&x->norms), gm_arg_u32(&ku),
                             gm_arg_u32(&nbc)};
            rc = launch(x, x->k_norms, nbc, args, 5);
        }
        /* E = S B, the exact int32 sums of the codes' products. */
        unsigned int rows_e = 2 * nbc;
        if (rc == GM_OK) {
            gm_arg args[] = {gm_arg_buf(&x->s),   gm_arg_buf(op->b.buf), gm_arg_buf(&x->e), gm_arg_u64(&op->b.off),
                             gm_arg_u32(&rows_e), gm_arg_u32(&ku),       gm_arg_u32(&nu),   gm_arg_u32(&b_trans)};
            rc = launch(x, x->k_expect, (size_t)((rows_e + EXPECT_ROWS - 1) / EXPECT_ROWS) * n,
                        args, 8);
        }
        gm_arg cmp[] = {gm_arg_buf(op->a.buf),  gm_arg_buf(op->b.buf),  gm_arg_buf(op->c.buf),
                        gm_arg_buf(op->c.buf),  gm_arg_buf(r),          gm_arg_buf(&x->e),
                        gm_arg_buf(&x->norms),  gm_arg_buf(&x->cn),     gm_arg_buf(&x->diag),
                        gm_arg_buf(&x->verdict), gm_arg_u64(&op->a.off), gm_arg_u64(&op->b.off),
                        gm_arg_u64(&op->c.off), gm_arg_u64(&r_off),     gm_arg_u64(&first_row),
                        gm_arg_u64(&m),         gm_arg_u64(&b0),        gm_arg_u64(&none),
                        gm_arg_u32(&ku),        gm_arg_u32(&nu),        gm_arg_u32(&gu),
                        gm_arg_u32(&nbc),       gm_arg_u32(&b_trans),   gm_arg_u32(&c_fp32),
                        gm_arg_u32(&has_r),     gm_arg_f32(&sa),        gm_arg_f32(&sb),
                        gm_arg_f32(&sc),        gm_arg_f32(&sr),        gm_arg_f32(&bd.coef_mag),
                        gm_arg_f32(&bd.u_sum),  gm_arg_f32(&bd.u_e),    gm_arg_f32(&bd.slack)};
        gm_device_verdict v;
        if (rc == GM_OK)
            rc = gm_device_check_run(dev, x->k_compare, x->chunked, (size_t)nbc * n, cmp,
                                     (int)(sizeof cmp / sizeof *cmp), 9, &x->verdict, none, &v);
        if (rc != GM_OK || !v.wrong)
            continue;
        /* The first failing sum: its difference and tolerance, then its rows. */
        uint64_t block = v.first / n, col = v.first % n;
        float d[2];
        gm_buffer host = {.kind = GM_MEM_HOST, .bytes = sizeof d, .host = d};
        rc = dev->backend->copy(dev, 0, &host, 0, &x->diag, (size_t)(((block - b0) * n + col) * 8), sizeof d, false);
        f->ok = false;
        f->col = col;
        f->row_first = block * g;
        f->row_last = (block + 1) * g < m ? (block + 1) * g - 1 : m - 1;
        f->diff = d[0];
        f->tol = d[1];
        if (rc == GM_OK)
            rc = locate(x, op, &bd, f->row_first, f->row_last + 1 - f->row_first, col, f);
    }
    if (rc == GM_OK)
        rc = dev->backend->synchronize(dev, 0);
    f->checked = rc == GM_OK;
    if (rc != GM_OK)
        snprintf(f->why, sizeof f->why, "the checksums failed to run (%.120s)", dev->err.msg);
    return rc;
}
