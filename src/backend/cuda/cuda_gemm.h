/*
 * The vendor GEMM on CUDA: which cuBLAS call computes a gm_gemm
 * (backend.h), with which arguments. cuBLAS is loaded at run time and its
 * headers are not needed: the few values and entry points used are
 * declared here, as CUDA 13's library_types.h, cublas_api.h and
 * cublasLt.h define them
 * (tests/unit/test_cuda_gemm.c checks them against the toolkit's
 * headers where they are installed).
 */
#ifndef GM_CUDA_GEMM_H
#define GM_CUDA_GEMM_H

#include "backend/backend.h"

#include <stdint.h>

/* cudaDataType_t (library_types.h) */
enum {
    GM_CUDA_R_32F = 0,
    GM_CUDA_R_16F = 2,
    GM_CUDA_R_8I = 3,
    GM_CUDA_R_32I = 10,
    GM_CUDA_R_16BF = 14,
    GM_CUDA_R_8F_E4M3 = 28,
    GM_CUDA_R_8F_E5M2 = 29,
};

/* cublasStatus_t, cublasOperation_t, cublasComputeType_t, cublasGemmAlgo_t, cublasMath_t (cublas_api.h) */
enum {
    GM_CUBLAS_STATUS_SUCCESS = 0,
    GM_CUBLAS_STATUS_ALLOC_FAILED = 3,
    GM_CUBLAS_STATUS_ARCH_MISMATCH = 8,
    GM_CUBLAS_STATUS_NOT_SUPPORTED = 15,
    GM_CUBLAS_OP_N = 0,
    GM_CUBLAS_OP_T = 1,
    GM_CUBLAS_COMPUTE_32F = 68,
    GM_CUBLAS_COMPUTE_32I = 72,
    GM_CUBLAS_GEMM_DEFAULT = -1,
    GM_CUBLAS_DEFAULT_MATH = 0,
    GM_CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
};

/* cublasLtMatmulDescAttributes_t, cublasLtMatmulPreferenceAttributes_t,
 * cublasLtMatrixLayoutAttribute_t, cublasLtReductionScheme_t (cublasLt.h) */
enum {
    GM_CUBLASLT_MATMUL_DESC_TRANSA = 3,
    GM_CUBLASLT_MATMUL_DESC_TRANSB = 4,
    GM_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
    GM_CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 3,
    GM_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
    GM_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,
    GM_CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE = 2,
};

/* cublasLtMatmulHeuristicResult_t: the algorithm (8 opaque words), then
 * what it needs. The descriptors themselves are opaque pointers. */
typedef struct {
    uint64_t algo[8];
    size_t workspace_size;
    int state;                  /* cublasStatus_t */
    float waves_count;
    int reserved[4];
} gm_cublaslt_heuristic;

/*
 * The cuBLAS and cuBLASLt entry points the backend calls (cuda_blas.c):
 * X(field, exported symbol as a token, parameters), each returning a
 * cublasStatus_t (T(STATUS)); CUstream is cuda.h's, which the expansion
 * needs. Parameter types cuBLAS names are written T(NAME): the backend reads
 * them as GM_BLAS_C_NAME, the plain C type of the same size (enums are
 * int, handles and descriptors void *), so that it needs no cuBLAS header;
 * tests/unit/test_cuda_gemm.c reads them as cuBLAS's own types and checks
 * each prototype against the toolkit's headers.
 */
#define GM_CUBLAS_FUNCS(X, T)                                                                          \
    X(create, cublasCreate_v2, (T(HANDLE) *))                                                         \
    X(destroy, cublasDestroy_v2, (T(HANDLE)))                                                         \
    X(set_stream, cublasSetStream_v2, (T(HANDLE), CUstream))                                          \
    X(set_math_mode, cublasSetMathMode, (T(HANDLE), T(MATH)))                                         \
    X(gemm_ex, cublasGemmEx,                                                                          \
      (T(HANDLE), T(OP), T(OP), int, int, int, const void *, const void *, T(TYPE), int, const void *,   \
       T(TYPE), int, const void *, void *, T(TYPE), int, T(COMPUTE), T(ALGO)))                          \
    X(gemm_batched, cublasGemmStridedBatchedEx,                                                       \
      (T(HANDLE), T(OP), T(OP), int, int, int, const void *, const void *, T(TYPE), int, long long,      \
       const void *, T(TYPE), int, long long, const void *, void *, T(TYPE), int, long long, int,       \
       T(COMPUTE), T(ALGO)))
#define GM_CUBLASLT_FUNCS(X, T)                                                                        \
    X(create, cublasLtCreate, (T(LT_HANDLE) *))                                                       \
    X(destroy, cublasLtDestroy, (T(LT_HANDLE)))                                                       \
    X(desc_create, cublasLtMatmulDescCreate, (T(LT_DESC) *, T(COMPUTE), T(TYPE)))                     \
    X(desc_destroy, cublasLtMatmulDescDestroy, (T(LT_DESC)))                                          \
    X(desc_set, cublasLtMatmulDescSetAttribute, (T(LT_DESC), T(LT_DESC_ATTR), const void *, size_t))  \
    X(layout_create, cublasLtMatrixLayoutCreate, (T(LT_LAYOUT) *, T(TYPE), uint64_t, uint64_t, int64_t)) \
    X(layout_destroy, cublasLtMatrixLayoutDestroy, (T(LT_LAYOUT)))                                    \
    X(layout_set, cublasLtMatrixLayoutSetAttribute, (T(LT_LAYOUT), T(LT_LAYOUT_ATTR), const void *, size_t)) \
    X(pref_create, cublasLtMatmulPreferenceCreate, (T(LT_PREF) *))                                    \
    X(pref_destroy, cublasLtMatmulPreferenceDestroy, (T(LT_PREF)))                                    \
    X(pref_set, cublasLtMatmulPreferenceSetAttribute, (T(LT_PREF), T(LT_PREF_ATTR), const void *, size_t)) \
    X(heuristic, cublasLtMatmulAlgoGetHeuristic,                                                      \
      (T(LT_HANDLE), T(LT_DESC), T(LT_LAYOUT), T(LT_LAYOUT), T(LT_LAYOUT), T(LT_LAYOUT), T(LT_PREF), int,  \
       T(LT_HEURISTIC) *, int *))                                                                       \
    X(matmul, cublasLtMatmul,                                                                         \
      (T(LT_HANDLE), T(LT_DESC), const void *, const void *, T(LT_LAYOUT), const void *, T(LT_LAYOUT),     \
       const void *, const void *, T(LT_LAYOUT), void *, T(LT_LAYOUT), const T(LT_ALGO) *, void *, size_t,  \
       CUstream))

#define GM_BLAS_C(name) GM_BLAS_C_##name
#define GM_BLAS_C_STATUS int
#define GM_BLAS_C_HANDLE void *
#define GM_BLAS_C_OP int
#define GM_BLAS_C_TYPE int
#define GM_BLAS_C_COMPUTE int
#define GM_BLAS_C_ALGO int
#define GM_BLAS_C_MATH int
#define GM_BLAS_C_LT_HANDLE void *
#define GM_BLAS_C_LT_DESC void *
#define GM_BLAS_C_LT_LAYOUT void *
#define GM_BLAS_C_LT_PREF void *
#define GM_BLAS_C_LT_DESC_ATTR int
#define GM_BLAS_C_LT_PREF_ATTR int
#define GM_BLAS_C_LT_LAYOUT_ATTR int
#define GM_BLAS_C_LT_HEURISTIC gm_cublaslt_heuristic
#define GM_BLAS_C_LT_ALGO void

/*
 * One cuBLAS call, column-major as cuBLAS counts: C[m, n] = op(A) op(B)
 * (+ C with beta 1), op(A) m x k, op(B) k x n, each matrix stored
 * column-major with its leading dimension, `batch` of them strided. A
 * row-major matrix is the column-major storage of its transpose, and
 * row-major c = op(a) op(b) is column-major c^T = op(b)^T op(a)^T: A is the
 * gm_gemm's b (the weights), B its a, m and n are its n and m, lda its
 * ldb and ldb its lda, and each op is N where the gm_gemm's is none (b
 * [k, n] row-major is b^T = op(b)^T column-major) and T where it
 * transposes. cuda_blas.c's same_args compares every field (cuBLASLt's
 * plan of a shape is kept while they match): a field added here goes
 * there too.
 */
typedef struct {
    bool lt;                    /* cublasLtMatmul (fp8), else cublasGemmEx (one) or cublasGemmStridedBatchedEx */
    int transa, transb;         /* GM_CUBLAS_OP_N or _T */
    int m, n, k;
    int lda, ldb, ldc;
    int a_rows, a_cols;         /* A and B as stored (before op): cuBLASLt's layouts */
    int b_rows, b_cols;
    int a_type, b_type, c_type; /* cudaDataType_t of A, B and C (Lt: of D) */
    int lt_c_type;              /* Lt: C's type, which fp8 with an fp8 D needs 16-bit (beta 0: unread) */
    int compute;                /* cublasComputeType_t */
    int scale_type;             /* alpha and beta: GM_CUDA_R_32F, or _32I for int8 */
    int batch;                  /* products (1: one) */
    long long stride_a, stride_b, stride_c;    /* elements between a batch's matrices */
    size_t a_byte, b_byte, c_byte;             /* where A, B and C start in their buffers */
    int beta;                   /* 0: C written; 1: the product added to C */
} gm_cu_gemm_args;

/*
 * Plans g on a device of compute capability cc (major * 10 + minor): sets
 * g's plan fields and *out, or returns GM_ERR_UNSUPPORTED with the reason
 * in why (fp8 before 8.9, e5m2 x e5m2, layouts, alignments and dimensions
 * the kernels refuse; int8 and fp8 anything but "TN", with g->tn_only set).
 * Pure: no CUDA call, so that it is tested without a GPU.
 */
gm_status gm_cu_gemm_plan(gm_gemm *g, int cc, gm_cu_gemm_args *out, char *why, size_t why_len);

#endif
