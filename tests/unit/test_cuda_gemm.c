/*
 * The vendor GEMM on CUDA without a GPU (backend/cuda/cuda_gemm.h):
 *   - the cuBLAS values the backend declares itself are the toolkit
 *     headers' (library_types.h, cublas_api.h, cublasLt.h), and so are the
 *     layout of cuBLASLt's heuristic result and the prototype of every
 *     entry point the backend loads (GM_CUBLAS_FUNCS, GM_CUBLASLT_FUNCS);
 *   - each precision's plan: the call, the types, the compute type, the
 *     layout of the weights, and every refusal with its reason (fp8 before
 *     compute capability 8.9, e5m2 x e5m2, int8 and fp8 other than "TN",
 *     misaligned dimensions, leading dimensions or offsets, int4);
 *   - each plan's arguments, run through cuBLAS's column-major definition
 *     of C = alpha op(A) op(B) + beta C (strided batches, byte offsets) on
 *     the host, compute the row-major c_z = op(a_z) op(b_z) (+ c_z) of the
 *     gm_gemm: every combination of transposes, padded leading
 *     dimensions, offsets, batches and accumulation, in every precision
 *     (fp8 and int8 "TN" only);
 *   - cuBLAS and cuBLASLt load from the toolkit with every entry point the
 *     backend calls (no GPU needed to load them);
 *   - blas_plan answers for a closed device, from its description alone.
 * A build without CUDA skips it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#ifdef GM_HAVE_CUDA
#include "backend/cuda/cuda_gemm.h"
#include "backend/cuda/cuda_private.h"

#include <unistd.h>

#if __has_include(<cublasLt.h>)
#include <cublasLt.h>
#include <cublas_api.h>
#include <library_types.h>
#define HAVE_CUBLAS_HEADERS 1
#endif

static void test_values_match_toolkit_headers(void **state)
{
    (void)state;
#ifdef HAVE_CUBLAS_HEADERS
    assert_int_equal(GM_CUDA_R_32F, CUDA_R_32F);
    assert_int_equal(GM_CUDA_R_16F, CUDA_R_16F);
    assert_int_equal(GM_CUDA_R_16BF, CUDA_R_16BF);
    assert_int_equal(GM_CUDA_R_8I, CUDA_R_8I);
    assert_int_equal(GM_CUDA_R_32I, CUDA_R_32I);
    assert_int_equal(GM_CUDA_R_8F_E4M3, CUDA_R_8F_E4M3);
    assert_int_equal(GM_CUDA_R_8F_E5M2, CUDA_R_8F_E5M2);
    assert_int_equal(GM_CUBLAS_STATUS_SUCCESS, CUBLAS_STATUS_SUCCESS);
    assert_int_equal(GM_CUBLAS_STATUS_ALLOC_FAILED, CUBLAS_STATUS_ALLOC_FAILED);
    assert_int_equal(GM_CUBLAS_STATUS_ARCH_MISMATCH, CUBLAS_STATUS_ARCH_MISMATCH);
    assert_int_equal(GM_CUBLAS_STATUS_NOT_SUPPORTED, CUBLAS_STATUS_NOT_SUPPORTED);
    assert_int_equal(GM_CUBLAS_OP_N, CUBLAS_OP_N);
    assert_int_equal(GM_CUBLAS_OP_T, CUBLAS_OP_T);
    assert_int_equal(GM_CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F);
    assert_int_equal(GM_CUBLAS_COMPUTE_32I, CUBLAS_COMPUTE_32I);
    assert_int_equal(GM_CUBLAS_GEMM_DEFAULT, CUBLAS_GEMM_DEFAULT);
    assert_int_equal(GM_CUBLASLT_MATMUL_DESC_TRANSA, CUBLASLT_MATMUL_DESC_TRANSA);
    assert_int_equal(GM_CUBLASLT_MATMUL_DESC_TRANSB, CUBLASLT_MATMUL_DESC_TRANSB);
    assert_int_equal(GM_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
    assert_int_equal(GM_CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK);
    assert_int_equal(GM_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
    assert_int_equal(GM_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
    assert_int_equal(GM_CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
    assert_int_equal(GM_CUBLAS_DEFAULT_MATH, CUBLAS_DEFAULT_MATH);
    assert_int_equal(GM_CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
    /* The attributes' values are 4 bytes, as the backend passes them. */
    assert_int_equal(sizeof(cublasOperation_t), sizeof(int32_t));
    assert_int_equal(sizeof(gm_cublaslt_heuristic), sizeof(cublasLtMatmulHeuristicResult_t));
    assert_int_equal(offsetof(gm_cublaslt_heuristic, workspace_size),
                     offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
    assert_int_equal(offsetof(gm_cublaslt_heuristic, state), offsetof(cublasLtMatmulHeuristicResult_t, state));
    assert_int_equal(sizeof(((gm_cublaslt_heuristic *)0)->algo), sizeof(cublasLtMatmulAlgo_t));
#else
    skip();
#endif
}

#ifdef HAVE_CUBLAS_HEADERS
/* cuda_gemm.h's entry-point tables read with cuBLAS's own types. */
#define VENDOR(name) VENDOR_##name
#define VENDOR_STATUS cublasStatus_t
#define VENDOR_HANDLE cublasHandle_t
#define VENDOR_OP cublasOperation_t
#define VENDOR_TYPE cudaDataType
#define VENDOR_COMPUTE cublasComputeType_t
#define VENDOR_ALGO cublasGemmAlgo_t
#define VENDOR_MATH cublasMath_t
#define VENDOR_LT_LAYOUT_ATTR cublasLtMatrixLayoutAttribute_t
#define VENDOR_LT_HANDLE cublasLtHandle_t
#define VENDOR_LT_DESC cublasLtMatmulDesc_t
#define VENDOR_LT_LAYOUT cublasLtMatrixLayout_t
#define VENDOR_LT_PREF cublasLtMatmulPreference_t
#define VENDOR_LT_DESC_ATTR cublasLtMatmulDescAttributes_t
#define VENDOR_LT_PREF_ATTR cublasLtMatmulPreferenceAttributes_t
#define VENDOR_LT_HEURISTIC cublasLtMatmulHeuristicResult_t
#define VENDOR_LT_ALGO cublasLtMatmulAlgo_t

#define EXPANDED_NAME(x) NAME_OF(x)
#define NAME_OF(x) #x
/* The exported symbol is a function the headers declare under that name
 * (cublasCreate_v2, which cublas_v2.h calls cublasCreate, not mapped on
 * to another), with the table's parameters in cuBLAS's types; each
 * mismatch is printed. */
#define CHECK_PROTOTYPE(field, symbol, params)                                                            \
    if (!__builtin_types_compatible_p(__typeof__(&symbol), VENDOR_STATUS(*) params)) {                    \
        print_error("%s: the table's parameters are not those of %s in the toolkit's header\n", #field, #symbol); \
        wrong++;                                                                                          \
    }                                                                                                     \
    if (strcmp(#symbol, EXPANDED_NAME(symbol)) != 0) {                                                    \
        print_error("%s: the headers map %s to %s\n", #field, #symbol, EXPANDED_NAME(symbol));              \
        wrong++;                                                                                          \
    }                                                                                                     \
    checked++;
#endif

static void test_entry_points_match_toolkit_headers(void **state)
{
    (void)state;
#ifdef HAVE_CUBLAS_HEADERS
    int checked = 0, wrong = 0;
    /* The plain C types the backend passes are the size of cuBLAS's. */
    assert_int_equal(sizeof(cublasStatus_t), sizeof(int));
    assert_int_equal(sizeof(cublasOperation_t), sizeof(int));
    assert_int_equal(sizeof(cudaDataType), sizeof(int));
    assert_int_equal(sizeof(cublasComputeType_t), sizeof(int));
    assert_int_equal(sizeof(cublasGemmAlgo_t), sizeof(int));
    assert_int_equal(sizeof(cublasMath_t), sizeof(int));
    assert_int_equal(sizeof(cublasLtMatrixLayoutAttribute_t), sizeof(int));
    assert_int_equal(sizeof(cublasLtMatmulDescAttributes_t), sizeof(int));
    assert_int_equal(sizeof(cublasLtMatmulPreferenceAttributes_t), sizeof(int));
    assert_int_equal(sizeof(cublasHandle_t), sizeof(void *));
    assert_int_equal(sizeof(cublasLtHandle_t), sizeof(void *));
    GM_CUBLAS_FUNCS(CHECK_PROTOTYPE, VENDOR)
    GM_CUBLASLT_FUNCS(CHECK_PROTOTYPE, VENDOR)
    print_message("%d cuBLAS and cuBLASLt prototypes checked against the toolkit's headers\n", checked);
    assert_int_equal(wrong, 0);
    assert_int_equal(checked, 19);
#else
    skip();
#endif
}

/* Plans p at m x n x k on compute capability cc ("TN" for int8 and fp8,
 * which take nothing else); returns the status. */
static gm_status plan(gm_precision p, size_t m, size_t n, size_t k, int cc, gm_gemm *g, gm_cu_gemm_args *a,
                      char *why, size_t len)
{
    *g = (gm_gemm){.prec = p, .m = m, .n = n, .k = k, .b_nk = p == GM_INT8 || GM_PREC_IS_FP8(p)};
    why[0] = '\0';
    return gm_cu_gemm_plan(g, cc, a, why, len);
}

static void test_plans_per_precision(void **state)
{
    (void)state;
    static const struct {
        gm_precision p;
        int type, c_type, compute, scale;
    } ex[] = {
        {GM_FP32, GM_CUDA_R_32F, GM_CUDA_R_32F, GM_CUBLAS_COMPUTE_32F, GM_CUDA_R_32F},
        {GM_FP16, GM_CUDA_R_16F, GM_CUDA_R_16F, GM_CUBLAS_COMPUTE_32F, GM_CUDA_R_32F},
        {GM_BF16, GM_CUDA_R_16BF, GM_CUDA_R_16BF, GM_CUBLAS_COMPUTE_32F, GM_CUDA_R_32F},
        {GM_INT8, GM_CUDA_R_8I, GM_CUDA_R_32I, GM_CUBLAS_COMPUTE_32I, GM_CUDA_R_32I},
    };
    gm_gemm g;
    gm_cu_gemm_args a;
    char why[256];
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
        assert_int_equal(plan(ex[i].p, 64, 48, 96, 75, &g, &a, why, sizeof why), GM_OK);
        assert_false(a.lt);
        assert_int_equal(a.a_type, ex[i].type);
        assert_int_equal(a.b_type, ex[i].type);
        assert_int_equal(a.c_type, ex[i].c_type);
        assert_int_equal(a.compute, ex[i].compute);
        assert_int_equal(a.scale_type, ex[i].scale);
        /* int8: the integer tensor-core kernels' transposed A. */
        bool int8 = ex[i].p == GM_INT8;
        assert_int_equal(g.b_nk, int8);
        assert_int_equal(a.transa, int8 ? GM_CUBLAS_OP_T : GM_CUBLAS_OP_N);
        assert_int_equal(a.transb, GM_CUBLAS_OP_N);
        assert_int_equal(g.acc, int8 ? GM_ACC_INT32 : GM_ACC_FP32);
        /* Column-major: the output's rows are our columns. */
        assert_int_equal(a.m, 48);
        assert_int_equal(a.n, 64);
        assert_int_equal(a.k, 96);
    }
    /* fp8 e4m3 through cuBLASLt on 8.9 and later: "TN", an e4m3 D beside
     * a bf16 C (unread), fp32 accumulation. */
    for (int cc = 89; cc <= 100; cc += 11) {
        assert_int_equal(plan(GM_FP8E4M3, 64, 48, 96, cc, &g, &a, why, sizeof why), GM_OK);
        assert_true(a.lt);
        assert_true(g.b_nk);
        assert_int_equal(a.transa, GM_CUBLAS_OP_T);
        assert_int_equal(a.a_type, GM_CUDA_R_8F_E4M3);
        assert_int_equal(a.b_type, GM_CUDA_R_8F_E4M3);
        assert_int_equal(a.c_type, GM_CUDA_R_8F_E4M3);
        assert_int_equal(a.lt_c_type, GM_CUDA_R_16BF);
        assert_int_equal(a.compute, GM_CUBLAS_COMPUTE_32F);
        assert_int_equal(a.scale_type, GM_CUDA_R_32F);
        assert_int_equal(g.acc, GM_ACC_FP32);
    }
}

static void test_refusals_say_why(void **state)
{
    (void)state;
    gm_gemm g;
    gm_cu_gemm_args a;
    char why[256];
    assert_int_equal(plan(GM_FP8E4M3, 64, 48, 96, 80, &g, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_string_equal(why, "cuBLASLt's fp8 GEMM needs compute capability 8.9 or later; this device has 8.0");
    assert_int_equal(plan(GM_FP8E4M3, 64, 48, 96, 86, &g, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_non_null(strstr(why, "this device has 8.6"));
    assert_int_equal(plan(GM_FP8E5M2, 64, 48, 96, 90, &g, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_string_equal(why, "cuBLASLt has no e5m2 x e5m2 GEMM (its fp8 GEMMs take an e4m3 operand)");
    assert_int_equal(plan(GM_FP8E4M3, 42, 48, 96, 90, &g, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_string_equal(why, "cuBLASLt's fp8 GEMM takes m, n and k multiples of 16 (here 42, 48, 96)");
    assert_int_equal(plan(GM_FP8E4M3, 64, 40, 96, 90, &g, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_int_equal(plan(GM_INT8, 42, 48, 96, 90, &g, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_string_equal(why, "cuBLAS's int8 GEMM takes m, n and k multiples of 4 (here 42, 48, 96)");
    assert_int_equal(plan(GM_INT8, 44, 48, 98, 90, &g, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    /* int8 and fp8: "TN" alone, and the refusal says so (tn_only). */
    for (int t = 0; t < 3; t++) {
        g = (gm_gemm){.prec = t == 2 ? GM_FP8E4M3 : GM_INT8, .m = 64, .n = 48, .k = 96, .trans_a = t == 1,
                      .b_nk = t == 1};
        assert_int_equal(gm_cu_gemm_plan(&g, 90, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
        assert_true(g.tn_only);
        assert_non_null(strstr(why, "takes b stored [n, k] and a [m, k] only (\"TN\")"));
    }
    g = (gm_gemm){.prec = GM_INT8, .m = 64, .n = 48, .k = 96, .b_nk = true, .lda = 98};
    assert_int_equal(gm_cu_gemm_plan(&g, 90, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_string_equal(why, "cuBLAS's int8 GEMM takes leading dimensions, offsets and strides multiples of 4");
    g = (gm_gemm){.prec = GM_FP8E4M3, .m = 64, .n = 48, .k = 96, .b_nk = true, .c_off = 8};
    assert_int_equal(gm_cu_gemm_plan(&g, 90, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    g = (gm_gemm){.prec = GM_INT8, .m = 64, .n = 48, .k = 96, .b_nk = true, .c_fp32 = true};
    assert_int_equal(gm_cu_gemm_plan(&g, 90, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_string_equal(why, "cuBLAS's int8 GEMM writes the int32 accumulator, not fp32");
    g = (gm_gemm){.prec = GM_FP8E4M3, .m = 64, .n = 48, .k = 96, .b_nk = true, .accumulate = true};
    assert_int_equal(gm_cu_gemm_plan(&g, 90, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    g.c_fp32 = true;
    assert_int_equal(gm_cu_gemm_plan(&g, 90, &a, why, sizeof why), GM_OK);
    /* A leading dimension shorter than the stored row. */
    g = (gm_gemm){.prec = GM_BF16, .m = 64, .n = 48, .k = 96, .trans_a = true, .lda = 60};
    assert_int_equal(gm_cu_gemm_plan(&g, 90, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_int_equal(plan(GM_INT4, 64, 48, 96, 90, &g, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_string_equal(why, "cuBLAS has no int4 GEMM");
    assert_int_equal(plan(GM_FP16, (size_t)1 << 31, 48, 96, 90, &g, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_string_equal(why, "cuBLAS takes dimensions from 1 to 2^31 - 1");
    /* Any other shape in the 16-bit types and fp32. */
    assert_int_equal(plan(GM_BF16, 42, 45, 93, 75, &g, &a, why, sizeof why), GM_OK);
}

/* Element (i, j) of op(X) of a column-major matrix X with leading
 * dimension ld starting at element `at`. */
static double op_elem(const double *mat, size_t at, int ld, int trans, int i, int j)
{
    return trans == GM_CUBLAS_OP_N ? mat[at + (size_t)i + (size_t)j * ld] : mat[at + (size_t)j + (size_t)i * ld];
}

/* Runs the call planned in x as cuBLAS defines it: for each product z,
 * C_z = op(A_z) op(B_z) + beta C_z, A_z at a_byte / es + z stride_a of
 * `A` (the buffer the backend passes as A: the gm_gemm's b), B_z of `B`
 * (its a), C_z of c; element sizes es (A, B) and c_es. */
static void run_as_cublas(const gm_cu_gemm_args *x, size_t es, size_t c_es, const double *A, const double *B,
                          double *c)
{
    for (int z = 0; z < x->batch; z++) {
        size_t a0 = x->a_byte / es + (size_t)z * (size_t)x->stride_a, b0 = x->b_byte / es + (size_t)z * (size_t)x->stride_b;
        size_t c0 = x->c_byte / c_es + (size_t)z * (size_t)x->stride_c;
        for (int i = 0; i < x->m; i++)
            for (int j = 0; j < x->n; j++) {
                double s = 0;
                for (int l = 0; l < x->k; l++)
                    s += op_elem(A, a0, x->lda, x->transa, i, l) * op_elem(B, b0, x->ldb, x->transb, l, j);
                double *out = &c[c0 + (size_t)i + (size_t)j * x->ldc];
                *out = s + x->beta * *out;
            }
    }
}

/* Every gm_gemm layout in every precision: the plan's arguments, run as
 * cuBLAS defines its GEMM over the buffers laid out as the gm_gemm says
 * (transposes, padded rows, offsets, a batch, c added to), give row-major
 * c_z = op(a_z) op(b_z) + c_z computed directly; and the padding between
 * rows and products is left as it was. */
static void test_plans_compute_row_major_product(void **state)
{
    (void)state;
    enum { M = 32, N = 48, K = 16, PAD = 16, OFF = 32, BATCH = 3 };
    const size_t a_len = 2 * OFF + BATCH * (K + PAD) * (M + PAD), b_len = 2 * OFF + BATCH * (K + PAD) * (N + PAD);
    const size_t c_len = 2 * OFF + BATCH * (M + PAD) * (N + PAD);
    double *a = malloc(a_len * sizeof *a), *b = malloc(b_len * sizeof *b), *c = malloc(c_len * sizeof *c);
    double *want = malloc(c_len * sizeof *want);
    assert_true(a && b && c && want);
    for (size_t i = 0; i < a_len; i++)
        a[i] = (double)((i * 37) % 19) - 9;
    for (size_t i = 0; i < b_len; i++)
        b[i] = (double)((i * 53) % 23) - 11;
    const gm_precision ps[] = {GM_FP32, GM_FP16, GM_BF16, GM_INT8, GM_FP8E4M3};
    int checked = 0;
    for (size_t p = 0; p < sizeof ps / sizeof *ps; p++)
        for (int layout = 0; layout < 64; layout++) {
            bool ta = layout & 1, tb = layout & 2, pad = layout & 4, off = layout & 8, batch = layout & 16,
                 acc = layout & 32;
            bool tn = ps[p] == GM_INT8 || ps[p] == GM_FP8E4M3;
            if (tn && (ta || !tb || (acc && ps[p] == GM_FP8E4M3)))
                continue;
            gm_gemm g = {.prec = ps[p], .m = M, .n = N, .k = K, .trans_a = ta, .b_nk = tb, .accumulate = acc,
                         .c_fp32 = acc && ps[p] == GM_FP8E4M3};
            size_t ra = ta ? M : K, rb = tb ? K : N;     /* stored rows' lengths */
            g.lda = pad ? ra + PAD : 0;
            g.ldb = pad ? rb + PAD : 0;
            g.ldc = pad ? N + PAD : 0;
            g.a_off = g.b_off = g.c_off = off ? OFF : 0;
            g.batch = batch ? BATCH : 0;
            g.stride_a = (ta ? K : M) * gm_gemm_lda(&g) + (pad ? PAD : 0);
            g.stride_b = (tb ? N : K) * gm_gemm_ldb(&g) + (pad ? PAD : 0);
            g.stride_c = M * gm_gemm_ldc(&g) + (pad ? PAD : 0);
            gm_cu_gemm_args x;
            char why[256];
            if (gm_cu_gemm_plan(&g, 90, &x, why, sizeof why) != GM_OK)
                fail_msg("%s layout %d: %s", gm_precision_name(ps[p]), layout, why);
            assert_int_equal(x.batch, batch ? BATCH : 1);
            /* cuBLASLt's layouts: A and B as stored, rows within the leading dimension. */
            assert_int_equal(x.a_rows, x.transa == GM_CUBLAS_OP_N ? x.m : x.k);
            assert_int_equal(x.a_cols, x.transa == GM_CUBLAS_OP_N ? x.k : x.m);
            assert_int_equal(x.b_rows, x.transb == GM_CUBLAS_OP_N ? x.k : x.n);
            assert_int_equal(x.b_cols, x.transb == GM_CUBLAS_OP_N ? x.n : x.k);
            assert_true(x.a_rows <= x.lda && x.b_rows <= x.ldb && x.m <= x.ldc);
            size_t es = gm_precision_size(ps[p]), c_es = ps[p] == GM_INT8 || g.c_fp32 ? 4 : es;
            for (size_t i = 0; i < c_len; i++)
                c[i] = want[i] = (double)((i * 29) % 13) - 6;
            for (size_t z = 0; z < (batch ? BATCH : 1); z++)
                for (size_t i = 0; i < M; i++)
                    for (size_t j = 0; j < N; j++) {
                        double s = 0;
                        for (size_t l = 0; l < K; l++) {
                            double av = a[g.a_off + z * g.stride_a + (ta ? l * gm_gemm_lda(&g) + i : i * gm_gemm_lda(&g) + l)];
                            double bv = b[g.b_off + z * g.stride_b + (tb ? j * gm_gemm_ldb(&g) + l : l * gm_gemm_ldb(&g) + j)];
                            s += av * bv;
                        }
                        double *w = &want[g.c_off + z * g.stride_c + i * gm_gemm_ldc(&g) + j];
                        *w = s + (acc ? *w : 0.0);
                    }
            /* cuBLAS's A is the gm_gemm's b, its B the gm_gemm's a. */
            run_as_cublas(&x, es, c_es, b, a, c);
            for (size_t i = 0; i < c_len; i++)
                if (c[i] != want[i])
                    fail_msg("%s layout %d: c[%zu] = %g, expected %g", gm_precision_name(ps[p]), layout, i, c[i],
                             want[i]);
            checked++;
        }
    print_message("%d layouts checked against cuBLAS's definition\n", checked);
    assert_int_equal(checked, 3 * 64 + 16 + 8);
    free(a);
    free(b);
    free(c);
    free(want);
}

/* Both libraries load from the toolkit's lib64 (off the loader's path, as
 * a toolkit install leaves them) with every entry point the backend uses. */
static void test_libraries_load_from_toolkit(void **state)
{
    (void)state;
    if (access("/usr/local/cuda/lib64/libcublasLt.so.13", F_OK) != 0
        && access("/usr/local/cuda/lib64/libcublasLt.so.12", F_OK) != 0)
        skip();
    const char *from = gm_cu_blas_library();
    if (!from)
        fail_msg("cuBLAS (with cublasGemmEx) not loaded although the toolkit has it");
    print_message("cuBLAS from %s\n", from);
    from = gm_cu_blaslt_library();
    if (!from)
        fail_msg("cuBLASLt (with cublasLtMatmul and its descriptors) not loaded although the toolkit has it");
    print_message("cuBLASLt from %s\n", from);
}

/* blas_plan reads the device's description alone: a closed device (no
 * backend state, as the oom suite's searching process holds it) is
 * planned for by its compute capability, refusals included. */
static void test_plans_on_a_closed_device(void **state)
{
    (void)state;
    if (access("/usr/local/cuda/lib64/libcublasLt.so.13", F_OK) != 0
        && access("/usr/local/cuda/lib64/libcublasLt.so.12", F_OK) != 0)
        skip();
    gm_device dev;
    memset(&dev, 0, sizeof dev);
    dev.info.compute_capability = 90;
    gm_gemm g = {.prec = GM_BF16, .m = 64, .n = 64, .k = 64};
    assert_int_equal(gm_cu_blas_plan(&dev, &g), GM_OK);
    assert_int_equal(g.acc, GM_ACC_FP32);
    dev.info.compute_capability = 80;
    gm_gemm f = {.prec = GM_FP8E4M3, .m = 64, .n = 64, .k = 64, .b_nk = true};
    assert_int_equal(gm_cu_blas_plan(&dev, &f), GM_ERR_UNSUPPORTED);
    assert_non_null(strstr(dev.err.msg, "8.9"));
}

static void test_implementation_names(void **state)
{
    (void)state;
    assert_string_equal(gm_cu_blas_impl(GM_FP32), "cublas");
    assert_string_equal(gm_cu_blas_impl(GM_FP16), "cublas");
    assert_string_equal(gm_cu_blas_impl(GM_BF16), "cublas");
    assert_string_equal(gm_cu_blas_impl(GM_INT8), "cublas");
    assert_string_equal(gm_cu_blas_impl(GM_FP8E4M3), "cublaslt");
    assert_string_equal(gm_cu_blas_impl(GM_FP8E5M2), "cublaslt");
    assert_null(gm_cu_blas_impl(GM_INT4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_match_toolkit_headers),
        cmocka_unit_test(test_entry_points_match_toolkit_headers),
        cmocka_unit_test(test_plans_per_precision),
        cmocka_unit_test(test_refusals_say_why),
        cmocka_unit_test(test_plans_compute_row_major_product),
        cmocka_unit_test(test_libraries_load_from_toolkit),
        cmocka_unit_test(test_plans_on_a_closed_device),
        cmocka_unit_test(test_implementation_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    printf("1..0 # SKIP built without CUDA: the cuBLAS plan is not compiled\n");
    return 0;
}
#endif
