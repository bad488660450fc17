/*
 * Which cuBLAS call computes a gm_gemm, with which arguments (cuda_gemm.h).
 *
 *   fp32, fp16, bf16  cublasGemmEx, compute type 32F (fp32 accumulation;
 *                     fp16 and bf16 on tensor cores), c in the inputs' type;
 *   int8              cublasGemmEx, compute type 32I, c the int32
 *                     accumulator; transposed A ("TN": b stored [n, k]), m,
 *                     n and k multiples of 4 (lda, ldb, ldc with them), as
 *                     the integer tensor-core kernels need;
 *   fp8e4m3           cublasLtMatmul, compute type 32F, d in e4m3 (c, unread
 *                     with beta 0, typed bf16 as cuBLASLt requires beside an
 *                     fp8 d), "TN", dimensions multiples of 16 (16-byte
 *                     aligned rows), compute capability 8.9 or later; the
 *                     scale pointers are left unset, i.e. 1, since the
 *                     suite's fp8 tensors are unscaled;
 *   fp8e5m2           none: cuBLASLt's fp8 GEMMs take at least one e4m3
 *                     operand, and the suite's e5m2 point has two e5m2.
 */
#include "backend/cuda/cuda_gemm.h"

#include <stdio.h>

#define DIM_MAX 0x7fffffffu   /* cuBLAS's int dimensions */

/* Sets the arguments of a row-major c = a b, b as the plan stores it. */
static void layout(const gm_gemm *g, gm_cu_gemm_args *out)
{
    out->transa = g->b_nk ? GM_CUBLAS_OP_T : GM_CUBLAS_OP_N;
    out->transb = GM_CUBLAS_OP_N;
    out->m = (int)g->n;
    out->n = (int)g->m;
    out->k = (int)g->k;
    out->lda = (int)(g->b_nk ? g->k : g->n);   /* b[n, k] is column-major k x n; b[k, n] n x k */
    out->ldb = (int)g->k;                      /* a[m, k] is column-major k x m */
    out->ldc = (int)g->n;                      /* c[m, n] is column-major n x m */
    out->a_rows = g->b_nk ? out->k : out->m;
    out->a_cols = g->b_nk ? out->m : out->k;
    out->b_rows = out->k;
    out->b_cols = out->n;
}

gm_status gm_cu_gemm_plan(gm_gemm *g, int cc, gm_cu_gemm_args *out, char *why, size_t why_len)
{
    *out = (gm_cu_gemm_args){0};
    g->b_nk = false;
    g->acc = GM_ACC_FP32;
    if (g->m == 0 || g->n == 0 || g->k == 0 || g->m > DIM_MAX || g->n > DIM_MAX || g->k > DIM_MAX) {
        snprintf(why, why_len, "cuBLAS takes dimensions from 1 to 2^31 - 1");
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
    bool fp8 = g->prec == GM_FP8E4M3;
    if (fp8 && cc < 89) {
        snprintf(why, why_len, "cuBLASLt's fp8 GEMM needs compute capability 8.9 or later; this device has %d.%d",
                 cc / 10, cc % 10);
        return GM_ERR_UNSUPPORTED;
    }
    if (multiple && (g->m % multiple || g->n % multiple || g->k % multiple)) {
        snprintf(why, why_len, "%s takes m, n and k multiples of %u (here %zu, %zu, %zu)",
                 fp8 ? "cuBLASLt's fp8 GEMM" : "cuBLAS's int8 GEMM", multiple, g->m, g->n, g->k);
        return GM_ERR_UNSUPPORTED;
    }
    g->b_nk = multiple != 0;              /* int8 and fp8: the "TN" kernels */
    g->acc = g->prec == GM_INT8 ? GM_ACC_INT32 : GM_ACC_FP32;
    layout(g, out);
    out->lt = fp8;
    out->a_type = out->b_type = type;
    out->c_type = g->prec == GM_INT8 ? GM_CUDA_R_32I : type;
    out->lt_c_type = fp8 ? GM_CUDA_R_16BF : out->c_type;
    out->compute = g->prec == GM_INT8 ? GM_CUBLAS_COMPUTE_32I : GM_CUBLAS_COMPUTE_32F;
    out->scale_type = g->prec == GM_INT8 ? GM_CUDA_R_32I : GM_CUDA_R_32F;
    return GM_OK;
}
