/*
 * Which cuBLAS call computes a gm_gemm, with which arguments (cuda_gemm.h).
 *
 *   fp32, fp16, bf16  cublasGemmEx (one product) or cublasGemmStridedBatchedEx,
 *                     compute type 32F (fp32 accumulation; fp16 and bf16 on
 *                     tensor cores), c in the inputs' type or fp32 (c_fp32);
 *                     any transposes, leading dimensions and offsets (each
 *                     operand's start aligned to its element: the suite's
 *                     buffers are);
 *   int8              cublasGemmEx / cublasGemmStridedBatchedEx, compute type
 *                     32I, c the int32 accumulator; "TN" only (b stored
 *                     [n, k], a not transposed), m, n, k, leading dimensions,
 *                     offsets and strides multiples of 4, as the integer
 *                     tensor-core kernels need;
 *   fp8e4m3           cublasLtMatmul, compute type 32F, d in e4m3 or fp32
 *                     (c_fp32); beside an e4m3 d, c is typed bf16 as cuBLASLt
 *                     requires and unread (beta 0: accumulate is refused
 *                     there); "TN" only, dimensions, leading dimensions,
 *                     offsets and strides multiples of 16 (16-byte aligned
 *                     rows and starts), compute capability 8.9 or later; the
 *                     scale pointers are left unset, i.e. 1, since the
 *                     suite's fp8 tensors are unscaled; a batch through the
 *                     layouts' batch count and strides;
 *   fp8e5m2           none: cuBLASLt's fp8 GEMMs take at least one e4m3
 *                     operand, and the suite's e5m2 point has two e5m2.
 */
#include "backend/cuda/cuda_gemm.h"

#include <stdio.h>

#define DIM_MAX 0x7fffffffu   /* cuBLAS's int dimensions */

/* Sets the column-major arguments of row-major c = op(a) op(b) (cuda_gemm.h). */
static void layout(const gm_gemm *g, size_t es, size_t c_es, gm_cu_gemm_args *out)
{
    out->transa = g->b_nk ? GM_CUBLAS_OP_T : GM_CUBLAS_OP_N;
    out->transb = g->trans_a ? GM_CUBLAS_OP_T : GM_CUBLAS_OP_N;
    out->m = (int)g->n;
    out->n = (int)g->m;
    out->k = (int)g->k;
    out->lda = (int)gm_gemm_ldb(g);
    out->ldb = (int)gm_gemm_lda(g);
    out->ldc = (int)gm_gemm_ldc(g);
    /* As stored, column-major: op N keeps the stored shape, T swaps it. */
    out->a_rows = out->transa == GM_CUBLAS_OP_N ? out->m : out->k;
    out->a_cols = out->transa == GM_CUBLAS_OP_N ? out->k : out->m;
    out->b_rows = out->transb == GM_CUBLAS_OP_N ? out->k : out->n;
    out->b_cols = out->transb == GM_CUBLAS_OP_N ? out->n : out->k;
    out->batch = g->batch > 1 ? (int)g->batch : 1;
    out->stride_a = (long long)g->stride_b;
    out->stride_b = (long long)g->stride_a;
    out->stride_c = (long long)g->stride_c;
    out->a_byte = g->b_off * es;
    out->b_byte = g->a_off * es;
    out->c_byte = g->c_off * c_es;
    out->beta = g->accumulate ? 1 : 0;
}

/* Is every layout figure of g (leading dimensions, offsets, strides) a
 * multiple of `multiple`? */
static bool aligned(const gm_gemm *g, size_t multiple)
{
    const size_t v[] = {gm_gemm_lda(g), gm_gemm_ldb(g), gm_gemm_ldc(g), g->a_off, g->b_off, g->c_off,
                        g->stride_a, g->stride_b, g->stride_c, g->m, g->n, g->k};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (v[i] % multiple)
            return false;
    return true;
}

gm_status gm_cu_gemm_plan(gm_gemm *g, int cc, gm_cu_gemm_args *out, char *why, size_t why_len)
{
    *out = (gm_cu_gemm_args){0};
    g->tn_only = false;
    g->acc = GM_ACC_FP32;
    if (g->m == 0 || g->n == 0 || g->k == 0 || g->m > DIM_MAX || g->n > DIM_MAX || g->k > DIM_MAX) {
        snprintf(why, why_len, "cuBLAS takes dimensions from 1 to 2^31 - 1");
        return GM_ERR_UNSUPPORTED;
    }
    size_t rows_a = g->trans_a ? g->m : g->k, rows_b = g->b_nk ? g->k : g->n;
    if (gm_gemm_lda(g) < rows_a || gm_gemm_ldb(g) < rows_b || gm_gemm_ldc(g) < g->n || gm_gemm_lda(g) > DIM_MAX
        || gm_gemm_ldb(g) > DIM_MAX || gm_gemm_ldc(g) > DIM_MAX || g->batch > DIM_MAX) {
        snprintf(why, why_len, "cuBLAS takes leading dimensions from the stored row's length (here %zu, %zu, %zu) "
                 "to 2^31 - 1 and at most 2^31 - 1 products", rows_a, rows_b, g->n);
        return GM_ERR_UNSUPPORTED;
    }
    int type;
    unsigned multiple = 0;
    switch (g->prec) {
    case GM_FP32: type = GM_CUDA_R_32F; break;
    case GM_FP16: type = GM_CUDA_R_16F; break;
    case GM_BF16: type = GM_CUDA_R_16BF; break;
    case GM_INT8: type = GM_CUDA_R_8I; multiple = 4; break;
    case GM_FP8E4M3: type = GM_CUDA_R_8F_E4M3; multiple = 16; break;
    case GM_FP8E5M2:
        snprintf(why, why_len, "cuBLASLt has no e5m2 x e5m2 GEMM (its fp8 GEMMs take an e4m3 operand)");
        return GM_ERR_UNSUPPORTED;
    default:
        snprintf(why, why_len, "cuBLAS has no %s GEMM", gm_precision_name(g->prec));
        return GM_ERR_UNSUPPORTED;
    }
    bool fp8 = g->prec == GM_FP8E4M3, int8 = g->prec == GM_INT8;
    if (fp8 && cc < 89) {
        snprintf(why, why_len, "cuBLASLt's fp8 GEMM needs compute capability 8.9 or later; this device has %d.%d",
                 cc / 10, cc % 10);
        return GM_ERR_UNSUPPORTED;
    }
    const char *what = fp8 ? "cuBLASLt's fp8 GEMM" : "cuBLAS's int8 GEMM";
    if (multiple && (g->trans_a || !g->b_nk)) {
        g->tn_only = true;
        snprintf(why, why_len, "%s takes b stored [n, k] and a [m, k] only (\"TN\")", what);
        return GM_ERR_UNSUPPORTED;
    }
    if (multiple && (g->m % multiple || g->n % multiple || g->k % multiple)) {
        snprintf(why, why_len, "%s takes m, n and k multiples of %u (here %zu, %zu, %zu)", what, multiple, g->m, g->n,
                 g->k);
        return GM_ERR_UNSUPPORTED;
    }
    if (multiple && !aligned(g, multiple)) {
        snprintf(why, why_len, "%s takes leading dimensions, offsets and strides multiples of %u", what, multiple);
        return GM_ERR_UNSUPPORTED;
    }
    if (int8 && g->c_fp32) {
        snprintf(why, why_len, "cuBLAS's int8 GEMM writes the int32 accumulator, not fp32");
        return GM_ERR_UNSUPPORTED;
    }
    if (fp8 && g->accumulate && !g->c_fp32) {
        snprintf(why, why_len, "cuBLASLt adds into an e4m3 result only through a 16-bit C: not done");
        return GM_ERR_UNSUPPORTED;
    }
    int c_type = int8 ? GM_CUDA_R_32I : g->c_fp32 ? GM_CUDA_R_32F : type;
    size_t es = gm_precision_size(g->prec), c_es = int8 || g->c_fp32 ? 4 : es;
    g->acc = int8 ? GM_ACC_INT32 : GM_ACC_FP32;
    layout(g, es, c_es, out);
    out->lt = fp8;
    out->a_type = out->b_type = type;
    out->c_type = c_type;
    /* cuBLASLt: C as D, but beside an fp8 D a 16-bit C (unread, beta 0). */
    out->lt_c_type = fp8 && !g->c_fp32 ? GM_CUDA_R_16BF : c_type;
    out->compute = int8 ? GM_CUBLAS_COMPUTE_32I : GM_CUBLAS_COMPUTE_32F;
    out->scale_type = int8 ? GM_CUDA_R_32I : GM_CUDA_R_32F;
    return GM_OK;
}
