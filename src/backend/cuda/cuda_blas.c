/*
 * The vendor GEMM of the CUDA backend: cuBLAS (cublasGemmEx) and, for
 * fp8, cuBLASLt (cublasLtMatmul), loaded at run time (libcublas.so.13,
 * .12 or libcublas.so, and libcublasLt likewise; open_library says where
 * from), so that gpumem starts without them; without them the vendor
 * rows are `unsupported`. cuda_gemm_plan.c decides the call and its
 * arguments; the entry points are declared in cuda_gemm.h, to need no
 * cuBLAS header. The cuBLASLt call offers the device's workspace
 * (gm_cu_blaslt_workspace), and keeps the descriptors and the heuristic's
 * algorithm of the last shape (lt_plan), so that a timed call enqueues the
 * matmul alone.
 */
#include "backend/cuda/cuda_gemm.h"
#include "backend/cuda/cuda_private.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define DECLARE(field, symbol, params) GM_BLAS_C(STATUS)(*field) params;
static struct {
    GM_CUBLAS_FUNCS(DECLARE, GM_BLAS_C)
} blas;

static struct {
    GM_CUBLASLT_FUNCS(DECLARE, GM_BLAS_C)
} lt;
#undef DECLARE

typedef struct {
    const char *base;            /* "libcublas" */
    int state;                   /* 0 not tried, 1 loaded, -1 missing */
    char from[512];
} library;
static library cublas_lib = {"libcublas", 0, ""}, cublaslt_lib = {"libcublasLt", 0, ""};

/* Opens lib->base: by soname (the loader's path, LD_LIBRARY_PATH), else
 * from the toolkit's lib64 ($CUDA_HOME, then /usr/local/cuda), where a
 * toolkit install leaves it off the loader's path. */
static void *open_library(library *lib)
{
    static const char *const versions[] = {".so.13", ".so.12", ".so"};
    const char *home = getenv("CUDA_HOME");
    const char *dirs[] = {NULL, home && *home ? home : NULL, "/usr/local/cuda"};
    for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
        if (d > 0 && !dirs[d])
            continue;
        for (size_t i = 0; i < sizeof versions / sizeof *versions; i++) {
            if (d == 0)
                snprintf(lib->from, sizeof lib->from, "%s%s", lib->base, versions[i]);
            else
                snprintf(lib->from, sizeof lib->from, "%s/lib64/%s%s", dirs[d], lib->base, versions[i]);
            void *h = dlopen(lib->from, RTLD_NOW | RTLD_LOCAL);
            if (h)
                return h;
        }
    }
    lib->from[0] = '\0';
    return NULL;
}

#define SYM(h, field, name) (*(void **)&(field) = dlsym(h, name), (field) != NULL)

static bool load_cublas(void)
{
    if (cublas_lib.state == 0) {
        void *h = open_library(&cublas_lib);
        bool ok = h != NULL;
#define LOAD(field, symbol, params) ok = ok && SYM(h, blas.field, #symbol);
        GM_CUBLAS_FUNCS(LOAD, GM_BLAS_C)
#undef LOAD
        cublas_lib.state = ok ? 1 : -1;
    }
    return cublas_lib.state > 0;
}

static bool load_cublaslt(void)
{
    if (cublaslt_lib.state == 0) {
        void *h = open_library(&cublaslt_lib);
        bool ok = h != NULL;
#define LOAD(field, symbol, params) ok = ok && SYM(h, lt.field, #symbol);
        GM_CUBLASLT_FUNCS(LOAD, GM_BLAS_C)
#undef LOAD
        cublaslt_lib.state = ok ? 1 : -1;
    }
    return cublaslt_lib.state > 0;
}

const char *gm_cu_blas_library(void)
{
    return load_cublas() ? cublas_lib.from : NULL;
}

const char *gm_cu_blaslt_library(void)
{
    return load_cublaslt() ? cublaslt_lib.from : NULL;
}

const char *gm_cu_blas_impl(gm_precision p)
{
    switch (p) {
    case GM_FP32: case GM_FP16: case GM_BF16: case GM_INT8: return "cublas";
    case GM_FP8E4M3: case GM_FP8E5M2: return "cublaslt";
    default: return NULL;
    }
}

/* Plans g for dev (gm_cu_gemm_plan) and loads the library it needs. */
static gm_status plan(gm_device *dev, gm_gemm *g, gm_cu_gemm_args *args)
{
    char why[sizeof dev->err.msg];
    if (gm_cu_gemm_plan(g, dev->info.compute_capability, args, why, sizeof why) != GM_OK)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s", why);
    if (args->lt ? !load_cublaslt() : !load_cublas())
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0,
                              "%s not found (%s.so.13 or .12 on the loader's path, in $CUDA_HOME/lib64 or "
                              "/usr/local/cuda/lib64)", args->lt ? "cuBLASLt" : "cuBLAS",
                              args->lt ? cublaslt_lib.base : cublas_lib.base);
    return GM_OK;
}

gm_status gm_cu_blas_plan(gm_device *dev, gm_gemm *g)
{
    gm_cu_gemm_args args;
    return plan(dev, g, &args);
}

/* A cuBLAS status as the suite's, with dev->err set. */
static gm_status status_of(gm_device *dev, int rc, const char *call, gm_precision p)
{
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        return GM_OK;
    if (rc == GM_CUBLAS_STATUS_ALLOC_FAILED)
        return gm_device_fail(dev, GM_ERR_OOM, rc, "%s: allocation failed", call);
    if (rc == GM_CUBLAS_STATUS_NOT_SUPPORTED || rc == GM_CUBLAS_STATUS_ARCH_MISMATCH)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, rc, "%s: no %s GEMM on this device (status %d)", call,
                              gm_precision_name(p), rc);
    return gm_device_fail(dev, GM_ERR_INVALID, rc, "%s failed with status %d", call, rc);
}

/* The device's cuBLAS handle on `stream`, made on first use with the math
 * mode that keeps split sums in the compute type (fp32) rather than a
 * 16-bit output's (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION): the
 * checks bound the error of fp32 accumulation. */
static int blas_handle(gm_device *dev, CUstream stream, void **out)
{
    void **handle = gm_cu_blas_handle(dev);
    int rc = GM_CUBLAS_STATUS_SUCCESS;
    if (!*handle) {
        rc = blas.create(handle);
        if (rc == GM_CUBLAS_STATUS_SUCCESS)
            rc = blas.set_math_mode(*handle, GM_CUBLAS_DEFAULT_MATH | GM_CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
    }
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = blas.set_stream(*handle, stream);
    *out = *handle;
    return rc;
}

static int gemm_ex(gm_device *dev, CUstream stream, const gm_cu_gemm_args *x, const gm_buffer *a,
                   const gm_buffer *b, gm_buffer *c)
{
    void *handle = NULL;
    int rc = blas_handle(dev, stream, &handle);
    /* alpha and beta in the scale type: float for 32F, int32 for 32I. */
    const float one_f = 1.0f, beta_f = (float)x->beta;
    const int32_t one_i = 1, beta_i = x->beta;
    bool integer = x->scale_type == GM_CUDA_R_32I;
    const void *alpha = integer ? (const void *)&one_i : &one_f, *beta = integer ? (const void *)&beta_i : &beta_f;
    /* cuBLAS's A is the gm_gemm's b, its B the gm_gemm's a (cuda_gemm.h). */
    const void *pa = (const void *)(b->handle + x->a_byte), *pb = (const void *)(a->handle + x->b_byte);
    void *pc = (void *)(c->handle + x->c_byte);
    if (rc != GM_CUBLAS_STATUS_SUCCESS)
        return rc;
    if (x->batch <= 1)
        return blas.gemm_ex(handle, x->transa, x->transb, x->m, x->n, x->k, alpha, pa, x->a_type, x->lda, pb,
                            x->b_type, x->ldb, beta, pc, x->c_type, x->ldc, x->compute, GM_CUBLAS_GEMM_DEFAULT);
    return blas.gemm_batched(handle, x->transa, x->transb, x->m, x->n, x->k, alpha, pa, x->a_type, x->lda,
                             x->stride_a, pb, x->b_type, x->ldb, x->stride_b, beta, pc, x->c_type, x->ldc,
                             x->stride_c, x->batch, x->compute, GM_CUBLAS_GEMM_DEFAULT);
}

/* cuBLASLt's plan of one GEMM shape: the operation's descriptor, the
 * layouts of A, B, C and D, and the heuristic's algorithm for them with
 * the workspace offered. Made on a shape's first call (its warm-up) and
 * kept, LT_PLANS shapes a device (the least recently used one is
 * replaced), until the device closes (gm_cu_blas_release), so that a
 * timed call of a shape enqueues the matmul alone: making the descriptors
 * and asking the heuristic is host work that a timed call would otherwise
 * count. A whole model's forward pass has a few shapes a layer. */
typedef struct {
    gm_cu_gemm_args args;       /* the shape it is for */
    uint64_t workspace_bytes;
    void *op, *layout[4];       /* A, B, C, D */
    gm_cublaslt_heuristic best;
    int found;                  /* 0: cuBLASLt has no algorithm for the shape */
    uint64_t used;              /* when last used (a counter), for replacement */
} lt_plan;

#define LT_PLANS 16

/* The device's plans (gm_cu_blaslt_plan_slot points to it). */
typedef struct {
    lt_plan *plan[LT_PLANS];
    uint64_t clock;
} lt_cache;

static bool same_args(const gm_cu_gemm_args *x, const gm_cu_gemm_args *y)
{
    return x->lt == y->lt && x->transa == y->transa && x->transb == y->transb && x->m == y->m && x->n == y->n &&
           x->k == y->k && x->lda == y->lda && x->ldb == y->ldb && x->ldc == y->ldc && x->a_rows == y->a_rows &&
           x->a_cols == y->a_cols && x->b_rows == y->b_rows && x->b_cols == y->b_cols && x->a_type == y->a_type &&
           x->b_type == y->b_type && x->c_type == y->c_type && x->lt_c_type == y->lt_c_type &&
           x->compute == y->compute && x->scale_type == y->scale_type && x->batch == y->batch &&
           x->stride_a == y->stride_a && x->stride_b == y->stride_b && x->stride_c == y->stride_c &&
           x->a_byte == y->a_byte && x->b_byte == y->b_byte && x->c_byte == y->c_byte && x->beta == y->beta;
}

static void lt_plan_free(lt_plan *p)
{
    if (!p)
        return;
    for (int i = 0; i < 4; i++)
        if (p->layout[i])
            lt.layout_destroy(p->layout[i]);
    if (p->op)
        lt.desc_destroy(p->op);
    free(p);
}

/* Makes the plan of x with workspace_bytes offered into *out (NULL where
 * a call failed: its cuBLAS status is returned). */
static int lt_plan_make(void *handle, const gm_cu_gemm_args *x, uint64_t workspace_bytes, lt_plan **out)
{
    *out = NULL;
    lt_plan *p = calloc(1, sizeof *p);
    if (!p)
        return GM_CUBLAS_STATUS_ALLOC_FAILED;
    p->args = *x;
    p->workspace_bytes = workspace_bytes;
    const int32_t transa = x->transa, transb = x->transb;
    void *pref = NULL;
    int rc = lt.desc_create(&p->op, x->compute, x->scale_type);
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.desc_set(p->op, GM_CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa);
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.desc_set(p->op, GM_CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb);
    const int types[4] = {x->a_type, x->b_type, x->lt_c_type, x->c_type};
    const uint64_t rows[4] = {(uint64_t)x->a_rows, (uint64_t)x->b_rows, (uint64_t)x->m, (uint64_t)x->m};
    const uint64_t cols[4] = {(uint64_t)x->a_cols, (uint64_t)x->b_cols, (uint64_t)x->n, (uint64_t)x->n};
    const int64_t lds[4] = {x->lda, x->ldb, x->ldc, x->ldc};
    const int64_t strides[4] = {x->stride_a, x->stride_b, x->stride_c, x->stride_c};
    const int32_t batch = x->batch;
    for (int i = 0; i < 4 && rc == GM_CUBLAS_STATUS_SUCCESS; i++) {
        rc = lt.layout_create(&p->layout[i], types[i], rows[i], cols[i], lds[i]);
        if (rc == GM_CUBLAS_STATUS_SUCCESS && batch > 1)
            rc = lt.layout_set(p->layout[i], GM_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
        if (rc == GM_CUBLAS_STATUS_SUCCESS && batch > 1)
            rc = lt.layout_set(p->layout[i], GM_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                               sizeof strides[i]);
    }
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.pref_create(&pref);
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.pref_set(pref, GM_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &p->workspace_bytes,
                         sizeof p->workspace_bytes);
    /* Split sums reduced in fp32 (or not split), never in the output's type. */
    const uint32_t schemes = GM_CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.pref_set(pref, GM_CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes, sizeof schemes);
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.heuristic(handle, p->op, p->layout[0], p->layout[1], p->layout[2], p->layout[3], pref, 1, &p->best,
                          &p->found);
    if (pref)
        lt.pref_destroy(pref);
    if (rc != GM_CUBLAS_STATUS_SUCCESS) {
        lt_plan_free(p);
        return rc;
    }
    *out = p;
    return rc;
}

static int lt_matmul(gm_device *dev, CUstream stream, const gm_cu_gemm_args *x, const gm_buffer *a,
                     const gm_buffer *b, gm_buffer *c, bool *no_algo)
{
    *no_algo = false;
    void **handle = gm_cu_blaslt_handle(dev);
    int rc = *handle ? GM_CUBLAS_STATUS_SUCCESS : lt.create(handle);
    if (rc != GM_CUBLAS_STATUS_SUCCESS)
        return rc;
    CUdeviceptr workspace = 0;
    const uint64_t workspace_bytes = gm_cu_blaslt_workspace(dev, &workspace);
    void **slot = gm_cu_blaslt_plan_slot(dev);
    if (!*slot && !(*slot = calloc(1, sizeof(lt_cache))))
        return GM_CUBLAS_STATUS_ALLOC_FAILED;
    lt_cache *cache = *slot;
    lt_plan *p = NULL;
    int oldest = 0;
    for (int i = 0; i < LT_PLANS && !p; i++) {
        lt_plan *q = cache->plan[i];
        if (q && same_args(&q->args, x) && q->workspace_bytes == workspace_bytes)
            p = q;
        else if (!q || (cache->plan[oldest] && q->used < cache->plan[oldest]->used))
            oldest = i;
    }
    if (!p) {
        lt_plan_free(cache->plan[oldest]);
        cache->plan[oldest] = NULL;
        rc = lt_plan_make(*handle, x, workspace_bytes, &cache->plan[oldest]);
        if (rc != GM_CUBLAS_STATUS_SUCCESS)
            return rc;
        p = cache->plan[oldest];
    }
    p->used = ++cache->clock;
    *no_algo = p->found == 0;
    if (*no_algo)
        return rc;
    /* cuBLASLt's A is the gm_gemm's b, its B the gm_gemm's a (cuda_gemm.h);
     * C is D (read with beta 1; with beta 0, beside an fp8 D, unread). */
    const float one = 1.0f, beta = (float)x->beta;
    void *d = (void *)(c->handle + x->c_byte);
    return lt.matmul(*handle, p->op, &one, (const void *)(b->handle + x->a_byte), p->layout[0],
                     (const void *)(a->handle + x->b_byte), p->layout[1], &beta, x->beta ? d : NULL, p->layout[2], d,
                     p->layout[3],
                     p->best.algo, (void *)workspace, (size_t)workspace_bytes, stream);
}

gm_status gm_cu_blas_gemm(gm_device *dev, int queue, const gm_gemm *g, const gm_buffer *a, const gm_buffer *b,
                          gm_buffer *c)
{
    gm_gemm planned = *g;
    gm_cu_gemm_args args;
    gm_status st = plan(dev, &planned, &args);
    if (st != GM_OK)
        return st;
    CUstream stream = gm_cu_stream(dev, queue);
    if (!stream)
        return dev->err.code;
    if (!args.lt)
        return status_of(dev, gemm_ex(dev, stream, &args, a, b, c), "cublasGemmEx", g->prec);
    bool no_algo = false;
    int rc = lt_matmul(dev, stream, &args, a, b, c, &no_algo);
    if (no_algo)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "cuBLASLt has no %s algorithm for m %zu, n %zu, k %zu",
                              gm_precision_name(g->prec), g->m, g->n, g->k);
    return status_of(dev, rc, "cublasLtMatmul", g->prec);
}

void gm_cu_blas_release(gm_device *dev)
{
    void **handle = gm_cu_blas_handle(dev);
    if (*handle && load_cublas())
        blas.destroy(*handle);
    *handle = NULL;
    void **plans = gm_cu_blaslt_plan_slot(dev);
    lt_cache *cache = *plans;
    for (int i = 0; cache && i < LT_PLANS; i++)
        if (cache->plan[i] && load_cublaslt())
            lt_plan_free(cache->plan[i]);
    free(cache);
    *plans = NULL;
    handle = gm_cu_blaslt_handle(dev);
    if (*handle && load_cublaslt())
        lt.destroy(*handle);
    *handle = NULL;
}
