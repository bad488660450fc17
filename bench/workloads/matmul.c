/* The matrix-product dispatch (bench/workloads/matmul.h). */
#include "bench/workloads/matmul.h"

#include "bench/bench.h"
#include "bench/model/precision_roles.h"
#include "bench/workloads/kernel_calls.h"

#include <stdio.h>
#include <string.h>

/* kernels/linear.cl's flags of matmul_strided and matmul_copy. */
#define MM_RESIDUAL 1u
#define MM_C_FP32 2u
#define MM_C_INT32 4u

gm_status gm_mm_ctx_init(gm_mm_ctx *ctx, gm_device *dev, gm_precision prec, gm_precision wprec, bool vendor)
{
    *ctx = (gm_mm_ctx){.dev = dev, .prec = prec, .wprec = wprec, .vendor = vendor, .fused_rows = 6};
    ctx->chunked = gm_device_prefers_chunked(dev);
    char variant[48];
    gm_role_variant(prec, wprec, prec, ctx->chunked, variant, sizeof variant);
    gm_status rc = dev->backend->program_build(dev, "linear", variant, NULL, &ctx->prog);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, ctx->prog, ctx->chunked ? "linear_blocked" : "linear_tiled",
                                      &ctx->k_linear);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, ctx->prog, "matmul_strided", &ctx->k_strided);
    if (rc == GM_OK && ctx->chunked)
        rc = dev->backend->kernel_get(dev, ctx->prog, "matmul_strided_tiled", &ctx->k_strided_tiled);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, ctx->prog, "matmul_copy", &ctx->k_copy);
    if (rc == GM_OK && wprec == GM_INT4)
        rc = dev->backend->kernel_get(dev, ctx->prog, "linear_dequant", &ctx->k_dequant);
    if (rc != GM_OK) {
        gm_error saved = dev->err;
        gm_mm_ctx_release(ctx);
        dev->err = saved;
    }
    return rc;
}

void gm_mm_ctx_release(gm_mm_ctx *ctx)
{
    if (!ctx->dev)
        return;
    const gm_backend *be = ctx->dev->backend;
    gm_kernel *ks[] = {ctx->k_linear, ctx->k_strided, ctx->k_copy, ctx->k_dequant, ctx->k_strided_tiled};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++)
        if (ks[i])
            be->kernel_release(ctx->dev, ks[i]);
    if (ctx->prog)
        be->program_release(ctx->dev, ctx->prog);
    *ctx = (gm_mm_ctx){0};
}

static uint64_t ld_of(const gm_mm_operand *o, uint64_t row) { return o->ld ? o->ld : row; }

static void count(gm_mm_tally *t, gm_mm_kind k)
{
    if (t)
        t->n[k]++;
}

static void refused(gm_mm_ctx *ctx, const char *why)
{
    if (!ctx->refused[0])
        snprintf(ctx->refused, sizeof ctx->refused, "%s", why);
}

static gm_status launch(gm_mm_ctx *ctx, gm_kernel *k, size_t items, const gm_arg *args, int n)
{
    size_t global, local;
    gm_launch_geometry(ctx->dev, ctx->chunked, items, &global, &local);
    return ctx->dev->backend->launch(ctx->dev, 0, k, global, local, args, n);
}

/* r_z into c_z (matmul_copy), so that a product can be added to it. */
static gm_status copy_residual(gm_mm_ctx *ctx, const gm_mm *op)
{
    unsigned int m = (unsigned int)op->m, n = (unsigned int)op->n, batch = op->batch > 1 ? (unsigned int)op->batch : 1;
    uint64_t c_rs = ld_of(&op->c, op->n), c_bs = op->c.stride;
    unsigned int flags = (op->c_fp32 ? MM_C_FP32 : 0) | (op->c_int32 ? MM_C_INT32 : 0);
    gm_arg args[] = {gm_arg_buf(op->r),    gm_arg_buf(op->c.buf), gm_arg_u32(&m),        gm_arg_u32(&n),
                     gm_arg_u32(&batch),   gm_arg_u64(&op->c.off), gm_arg_u64(&c_rs),    gm_arg_u64(&c_bs),
                     gm_arg_u64(&op->r_off), gm_arg_u32(&flags),  gm_arg_f32(&op->sc),  gm_arg_f32(&op->sr)};
    return launch(ctx, ctx->k_copy, (size_t)(batch * op->m * op->n), args, 12);
}

/* The vendor's gm_gemm for op with b as given (the weights, or their
 * dequantised copy). */
static gm_gemm gemm_of(const gm_mm *op, const gm_mm_operand *b, bool accumulate)
{
    return (gm_gemm){.prec = op->prec, .m = (size_t)op->m, .n = (size_t)op->n, .k = (size_t)op->k,
                     .trans_a = op->a.trans, .b_nk = b->trans, .lda = (size_t)op->a.ld, .ldb = (size_t)b->ld,
                     .ldc = (size_t)op->c.ld, .a_off = (size_t)op->a.off, .b_off = (size_t)b->off,
                     .c_off = (size_t)op->c.off, .batch = (size_t)op->batch, .stride_a = (size_t)op->a.stride,
                     .stride_b = (size_t)b->stride, .stride_c = (size_t)op->c.stride, .c_fp32 = op->c_fp32,
                     .accumulate = accumulate};
}

/* Runs op by the vendor where it can: GM_OK when it did (*ran says how),
 * GM_ERR_UNSUPPORTED (with ctx->refused set) where ours must, else the
 * failure. */
static gm_status try_vendor(gm_mm_ctx *ctx, const gm_mm *op, gm_mm_kind *ran)
{
    gm_device *dev = ctx->dev;
    const gm_backend *be = dev->backend;
    char why[sizeof ctx->refused];
    if (!be->blas_plan || !be->blas_gemm) {
        refused(ctx, "this backend has no vendor GEMM");
        return GM_ERR_UNSUPPORTED;
    }
    if (op->prec == GM_INT8 && !op->c_int32) {
        snprintf(why, sizeof why, "the vendor's int8 GEMM writes int32 sums, not int8 codes");
        refused(ctx, why);
        return GM_ERR_UNSUPPORTED;
    }
    gm_mm_operand b = op->b;
    gm_mm_kind kind = GM_MM_VENDOR;
    if (op->b_scales) {
        if (!ctx->dequant || !ctx->k_dequant || op->m <= ctx->fused_rows || op->b.trans || op->batch > 1
            || ctx->dequant->bytes < op->k * op->n * gm_precision_size(op->prec)) {
            refused(ctx, "int4 weights of this product run our fused kernel");
            return GM_ERR_UNSUPPORTED;
        }
        b = (gm_mm_operand){ctx->dequant, 0, 0, 0, false};
        kind = GM_MM_VENDOR_DEQUANT;
    }
    bool in_place = op->r && op->r == op->c.buf && op->r_off == op->c.off;
    gm_gemm g = gemm_of(op, &b, op->r != NULL);
    gm_error before = dev->err;
    gm_status rc = be->blas_plan(dev, &g);
    if (rc == GM_ERR_UNSUPPORTED) {
        snprintf(why, sizeof why, "%s", dev->err.msg);
        dev->err = before;
        refused(ctx, why);
        return rc;
    }
    if (rc == GM_OK && kind == GM_MM_VENDOR_DEQUANT) {
        unsigned int k = (unsigned int)op->k, n = (unsigned int)op->n, group = op->group;
        uint64_t zero = 0;
        gm_arg args[] = {gm_arg_buf(op->b.buf),  gm_arg_buf(op->b_scales), gm_arg_buf(ctx->dequant),
                         gm_arg_u32(&k),         gm_arg_u32(&n),           gm_arg_u64(&op->b.off),
                         gm_arg_u32(&group),     gm_arg_u64(&zero)};
        rc = launch(ctx, ctx->k_dequant, (size_t)(op->k * op->n), args, 8);
    }
    if (rc == GM_OK && op->r && !in_place)
        rc = copy_residual(ctx, op);
    if (rc == GM_OK)
        rc = be->blas_gemm(dev, 0, &g, op->a.buf, b.buf, (gm_buffer *)op->c.buf);
    *ran = kind;
    ctx->last_half_sums = g.acc == GM_ACC_FP16;
    return rc;
}

/* Can linear_tiled / linear_blocked run op (one plain row-major product)? */
static bool plain(const gm_mm *op)
{
    return op->batch <= 1 && !op->a.trans && !op->b.trans && ld_of(&op->a, op->k) == op->k
           && ld_of(&op->b, op->n) == op->n && ld_of(&op->c, op->n) == op->n && !op->c_fp32 && !op->c_int32;
}

static gm_status run_strided(gm_mm_ctx *ctx, const gm_mm *op)
{
    unsigned int m = (unsigned int)op->m, n = (unsigned int)op->n, k = (unsigned int)op->k;
    unsigned int batch = op->batch > 1 ? (unsigned int)op->batch : 1;
    uint64_t lda = ld_of(&op->a, op->a.trans ? op->m : op->k), ldb = ld_of(&op->b, op->b.trans ? op->k : op->n);
    uint64_t a_rs = op->a.trans ? 1 : lda, a_cs = op->a.trans ? lda : 1;
    uint64_t b_rs = op->b.trans ? 1 : ldb, b_cs = op->b.trans ? ldb : 1;
    uint64_t c_rs = ld_of(&op->c, op->n);
    unsigned int flags = (op->r ? MM_RESIDUAL : 0) | (op->c_fp32 ? MM_C_FP32 : 0) | (op->c_int32 ? MM_C_INT32 : 0);
    gm_arg args[] = {gm_arg_buf(op->a.buf),  gm_arg_buf(op->b.buf),   gm_arg_buf(op->c.buf),
                     gm_arg_buf(op->r ? op->r : op->c.buf),            gm_arg_u32(&m),
                     gm_arg_u32(&n),          gm_arg_u32(&k),          gm_arg_u32(&batch),
                     gm_arg_u64(&op->a.off),  gm_arg_u64(&a_rs),       gm_arg_u64(&a_cs),
                     gm_arg_u64(&op->a.stride), gm_arg_u64(&op->b.off), gm_arg_u64(&b_rs),
                     gm_arg_u64(&b_cs),       gm_arg_u64(&op->b.stride), gm_arg_u64(&op->c.off),
                     gm_arg_u64(&c_rs),       gm_arg_u64(&op->c.stride), gm_arg_u64(&op->r_off),
                     gm_arg_u32(&flags),      gm_arg_f32(&op->sa),     gm_arg_f32(&op->sb),
                     gm_arg_f32(&op->sc),     gm_arg_f32(&op->sr)};
    /* A CPU device: tiles of 4 x 16 outputs a work item (the same sums). */
    if (ctx->k_strided_tiled && !op->c_int32)
        return launch(ctx, ctx->k_strided_tiled, (size_t)(batch * ((op->m + 3) / 4) * ((op->n + 15) / 16)), args,
                      (int)(sizeof args / sizeof *args));
    return launch(ctx, ctx->k_strided, (size_t)(batch * op->m * op->n), args, (int)(sizeof args / sizeof *args));
}

gm_status gm_mm_run(gm_mm_ctx *ctx, const gm_mm *op, gm_mm_tally *t)
{
    gm_device *dev = ctx->dev;
    if (op->m == 0 || op->n == 0 || op->k == 0)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "a matrix product of %llu x %llu x %llu",
                              (unsigned long long)op->m, (unsigned long long)op->n, (unsigned long long)op->k);
    if (op->c_int32 && op->prec != GM_INT8)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "an int32 result is int8's alone");
    ctx->last_half_sums = false;
    if (ctx->vendor) {
        gm_mm_kind ran;
        gm_status rc = try_vendor(ctx, op, &ran);
        if (rc == GM_OK)
            count(t, ran);
        if (rc == GM_OK)
            ctx->last_kind = ran;
        if (rc != GM_ERR_UNSUPPORTED)
            return rc;
    }
    uint64_t batch = op->batch > 1 ? op->batch : 1;
    if (op->m > UINT32_MAX || op->n > UINT32_MAX || op->k > UINT32_MAX || batch > UINT32_MAX)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "our matrix products take dimensions that fit 32 bits");
    if (plain(op)) {
        gm_linear_call c = {op->a.buf, op->b.buf, op->c.buf, op->r, op->m, op->n, op->k, op->sa, op->sb, op->sc,
                            op->sr, op->a.off, op->b.off, op->c.off, op->r_off,
                            op->r ? GM_LINEAR_RESIDUAL : GM_LINEAR_PLAIN};
        count(t, GM_MM_OURS);
        ctx->last_kind = GM_MM_OURS;
        ctx->last_half_sums = false;
        if (op->b_scales)
            return gm_linear_enqueue_int4(dev, 0, ctx->k_linear, ctx->chunked, &c, op->b_scales, op->group);
        return gm_linear_enqueue(dev, 0, ctx->k_linear, ctx->chunked, &c);
    }
    if (op->b_scales)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "int4 weights take one plain [k, n] product");
    count(t, GM_MM_OURS_STRIDED);
    ctx->last_kind = GM_MM_OURS_STRIDED;
    ctx->last_half_sums = false;
    return run_strided(ctx, op);
}

void gm_mm_tally_describe(const gm_mm_ctx *ctx, const gm_mm_tally *t, char *buf, size_t len)
{
    const char *vendor = ctx->dev->backend->blas_impl ? ctx->dev->backend->blas_impl(ctx->prec) : NULL;
    const char *names[GM_MM_KINDS] = {vendor ? vendor : "vendor", vendor ? vendor : "vendor",
                                      ctx->chunked ? "blocked" : "tiled", "strided"};
    int kinds = 0;
    for (int k = 0; k < GM_MM_KINDS; k++)
        kinds += t->n[k] > 0;
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < GM_MM_KINDS && at < len; k++) {
        if (!t->n[k])
            continue;
        int w = snprintf(buf + at, len - at, "%s%s%s", at ? ", " : "", names[k],
                         k == GM_MM_VENDOR_DEQUANT ? " (int4 dequantised)" : "");
        if (w > 0 && kinds > 1 && (size_t)w < len - at)
            w += snprintf(buf + at + (size_t)w, len - at - (size_t)w, " %llu", (unsigned long long)t->n[k]);
        at += w > 0 ? (size_t)w : 0;
    }
    if (!kinds)
        snprintf(buf, len, "none");
}
