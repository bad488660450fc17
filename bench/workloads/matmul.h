/*
 * Matrix products for the whole model (and the training step built on it):
 * one description, gm_mm, and a dispatch that runs it by the vendor GEMM
 * (backend.h, gm_gemm: cuBLAS, cuBLASLt, CLBlast) where the context asks
 * for the vendor and the library's plan accepts the product, else by our
 * kernels (kernels/linear.cl): linear_tiled or linear_blocked for a plain
 * row-major product (its residual epilogue, int4 weights dequantised on
 * load), matmul_strided for any other layout. Every product the vendor
 * refuses runs ours, and the context remembers the first refusal's reason
 * so that the rows can say what ran.
 *
 * All products are row-major: c_z = op(a_z) op(b_z) (+ r_z), z < batch,
 * op(a) m x k, op(b) k x n, c m x n; a transposed operand is stored as
 * its transpose ([k, m] for a, [n, k] for b: a layer's weights held
 * [out, in]). Products accumulate in fp32 (int8 with c_int32: exactly in
 * int32), whatever runs them; the result is rounded once to c's type.
 */
#ifndef GM_MATMUL_H
#define GM_MATMUL_H

#include "device/device.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const gm_buffer *buf;
    uint64_t off;           /* element of the first matrix (int4 codes: bytes) */
    uint64_t ld;            /* elements between stored rows; 0: packed (the stored row's length) */
    uint64_t stride;        /* elements between a batch's matrices */
    bool trans;             /* stored transposed: a [k, m], b [n, k] (c: ignored) */
} gm_mm_operand;

typedef struct {
    gm_precision prec;      /* of a, b and c (see c_fp32, c_int32, b_scales) */
    uint64_t m, n, k;
    uint64_t batch;         /* products; 0 or 1: one */
    gm_mm_operand a, b, c;
    /* Added to the product, laid out as c from element r_off; NULL: none.
     * r at c's own place adds the product to c (BLAS's beta = 1). */
    const gm_buffer *r;
    uint64_t r_off;
    bool c_fp32;            /* c (and r) in fp32: a 16-bit or fp8 product's fp32 result */
    bool c_int32;           /* int8: c (and r) the exact int32 sum of the codes' products */
    float sa, sb, sc, sr;   /* int8 per-tensor scales of a, b, c and r (ignored otherwise) */
    /* int4 b (the weights, [k, n], not transposed, one product): its fp16
     * scales, one per `group` rows of a column (kernels/gm_portable.h);
     * NULL where b is in prec. */
    const gm_buffer *b_scales;
    unsigned int group;
} gm_mm;

/* What ran a product. */
typedef enum {
    GM_MM_VENDOR,           /* the vendor GEMM */
    GM_MM_VENDOR_DEQUANT,   /* int4 b dequantised into the workspace, then the vendor GEMM */
    GM_MM_OURS,             /* linear_tiled / linear_blocked */
    GM_MM_OURS_STRIDED,     /* matmul_strided */
    GM_MM_KINDS
} gm_mm_kind;

/* Products counted by what ran them. */
typedef struct {
    uint64_t n[GM_MM_KINDS];
} gm_mm_tally;

typedef struct {
    gm_device *dev;
    gm_precision prec, wprec;   /* the activations' and the weights' (int4, or prec) */
    bool chunked;               /* a CPU device: linear_blocked and chunked loops */
    bool vendor;                /* the vendor GEMM first */
    /* int4 weights and the vendor: a workspace of at least k * n elements
     * of prec for the largest weight matrix, given by the caller (counted
     * in its memory model); NULL: our fused kernel runs them. Products of
     * at most fused_rows rows (a decode step's) run our fused kernel
     * anyway: they are bound by reading the weights, which it reads as
     * int4. */
    const gm_buffer *dequant;
    uint64_t fused_rows;
    gm_program *prog;
    gm_kernel *k_linear, *k_strided, *k_copy, *k_dequant;
    gm_kernel *k_strided_tiled;     /* a CPU device's matmul_strided (linear.cl) */
    char refused[256];          /* why the vendor refused the first product it did not run ("" none) */
    /* The last product gm_mm_run enqueued: what ran it, and whether it
     * summed in fp16 (the vendor's plan said GM_ACC_FP16: CLBlast's
     * HGEMM) rather than fp32 (every other). Its checks take their
     * accumulation's bound from these. */
    gm_mm_kind last_kind;
    bool last_half_sums;
} gm_mm_ctx;

/* Builds our kernels for products in prec with weights in wprec (int4 or
 * prec) on dev (linear.cl's variant for them) and sets ctx up: the vendor
 * first when `vendor`. On failure returns the status with dev->err set,
 * and ctx holds nothing. */
gm_status gm_mm_ctx_init(gm_mm_ctx *ctx, gm_device *dev, gm_precision prec, gm_precision wprec, bool vendor);
void gm_mm_ctx_release(gm_mm_ctx *ctx);

/* Enqueues op on queue 0 by the vendor or by our kernels (see above), and
 * counts what ran it in *t (may be NULL). Errors: GM_ERR_UNSUPPORTED where
 * nothing can run it (dimensions past 32 bits for our kernels, an int4 b
 * transposed or batched), else the backend's. */
gm_status gm_mm_run(gm_mm_ctx *ctx, const gm_mm *op, gm_mm_tally *t);

/* The name of what ran the products of t, for a row's note: "cublas",
 * "cublas (int4 dequantised)", "blocked", "clblast 12, tiled 3" ...
 * (the vendor's name from the backend's blas_impl). */
void gm_mm_tally_describe(const gm_mm_ctx *ctx, const gm_mm_tally *t, char *buf, size_t len);

#endif
