/*
 * The vendor GEMM on CUDA without a GPU (backend/cuda/cuda_gemm.h):
 *   - the cuBLAS values the backend declares itself are the toolkit
 *     headers' (library_types.h, cublas_api.h, cublasLt.h), and so are the
 *     layout of cuBLASLt's heuristic result and the prototype of every
 *     entry point the backend loads (GM_CUBLAS_FUNCS, GM_CUBLASLT_FUNCS);
 *   - each precision's plan: the call, the types, the compute type, the
 *     layout of the weights, and every refusal with its reason (fp8 before
 *     compute capability 8.9, e5m2 x e5m2, misaligned dimensions, int4);
 *   - each plan's arguments, run through cuBLAS's column-major definition
 *     of C = op(A) op(B) on the host, compute the row-major y = x w that
 *     bench/workloads/linear.c checks, with w laid out as the plan asks;
 *   - cuBLAS and cuBLASLt load from the toolkit with every entry point the
 *     backend calls (no GPU needed to load them).
 * A build without CUDA skips it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
    assert_int_equal(sizeof(cublasLtMatmulDescAttributes_t), sizeof(int));
    assert_int_equal(sizeof(cublasLtMatmulPreferenceAttributes_t), sizeof(int));
    assert_int_equal(sizeof(cublasHandle_t), sizeof(void *));
    assert_int_equal(sizeof(cublasLtHandle_t), sizeof(void *));
    GM_CUBLAS_FUNCS(CHECK_PROTOTYPE, VENDOR)
    GM_CUBLASLT_FUNCS(CHECK_PROTOTYPE, VENDOR)
    print_message("%d cuBLAS and cuBLASLt prototypes checked against the toolkit's headers\n", checked);
    assert_int_equal(wrong, 0);
    assert_int_equal(checked, 16);
#else
    skip();
#endif
}

/* Plans p at m x n x k on compute capability cc; returns the status. */
static gm_status plan(gm_precision p, size_t m, size_t n, size_t k, int cc, gm_gemm *g, gm_cu_gemm_args *a,
                      char *why, size_t len)
{
    *g = (gm_gemm){.prec = p, .m = m, .n = n, .k = k};
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
    assert_int_equal(plan(GM_INT4, 64, 48, 96, 90, &g, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_string_equal(why, "cuBLAS has no int4 GEMM");
    assert_int_equal(plan(GM_FP16, (size_t)1 << 31, 48, 96, 90, &g, &a, why, sizeof why), GM_ERR_UNSUPPORTED);
    assert_string_equal(why, "cuBLAS takes dimensions from 1 to 2^31 - 1");
    /* Any other shape in the 16-bit types and fp32. */
    assert_int_equal(plan(GM_BF16, 42, 45, 93, 75, &g, &a, why, sizeof why), GM_OK);
}

/* Element (i, j) of a column-major matrix stored rows x cols with leading
 * dimension ld, as op() sees it. */
static double op_elem(const double *mat, int ld, int trans, int i, int j)
{
    return trans == GM_CUBLAS_OP_N ? mat[i + (size_t)j * ld] : mat[j + (size_t)i * ld];
}

/* Each precision's plan, run as cuBLAS defines its GEMM over the buffers
 * laid out as the plan asks (x[m, k]; w[k, n], or w[n, k] when b_nk),
 * gives y[m, n] = x w row-major. */
static void test_plans_compute_row_major_product(void **state)
{
    (void)state;
    enum { M = 32, N = 48, K = 16 };
    static double x[M * K], w[K * N], w_stored[K * N], want[M * N], c[M * N];
    for (int i = 0; i < M * K; i++)
        x[i] = (double)((i * 37) % 19 - 9);
    for (int i = 0; i < K * N; i++)
        w[i] = (double)((i * 53) % 23 - 11);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            want[i * N + j] = 0;
            for (int l = 0; l < K; l++)
                want[i * N + j] += x[i * K + l] * w[l * N + j];
        }
    const gm_precision ps[] = {GM_FP32, GM_FP16, GM_BF16, GM_INT8, GM_FP8E4M3};
    for (size_t p = 0; p < sizeof ps / sizeof *ps; p++) {
        gm_gemm g;
        gm_cu_gemm_args a;
        char why[256];
        assert_int_equal(plan(ps[p], M, N, K, 90, &g, &a, why, sizeof why), GM_OK);
        for (int l = 0; l < K; l++)
            for (int j = 0; j < N; j++)
                w_stored[g.b_nk ? (size_t)j * K + l : (size_t)l * N + j] = w[l * N + j];
        /* A is the weights, B the activations; both packed (ld = rows). */
        assert_int_equal(a.lda, a.a_rows);
        assert_int_equal(a.ldb, a.b_rows);
        assert_int_equal(a.a_rows * a.a_cols, K * N);
        assert_int_equal(a.b_rows * a.b_cols, M * K);
        assert_int_equal(a.transa == GM_CUBLAS_OP_N ? a.a_rows : a.a_cols, a.m);
        assert_int_equal(a.ldc, a.m);
        assert_int_equal(a.m * a.n, M * N);
        for (int i = 0; i < a.m; i++)
            for (int j = 0; j < a.n; j++) {
                double s = 0;
                for (int l = 0; l < a.k; l++)
                    s += op_elem(w_stored, a.lda, a.transa, i, l) * op_elem(x, a.ldb, a.transb, l, j);
                c[i + (size_t)j * a.ldc] = s;
            }
        for (int i = 0; i < M * N; i++)
            if (c[i] != want[i])
                fail_msg("%s: y[%d][%d] = %g, expected %g", gm_precision_name(ps[p]), i / N, i % N, c[i], want[i]);
    }
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
