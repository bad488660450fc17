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
    if (gm_cu_gemm_plan(g, gm_cu_compute_capability(dev), args, why, sizeof why) != GM_OK)
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

static int gemm_ex(gm_device *dev, CUstream stream, const gm_cu_gemm_args *x, const gm_buffer *a,
                   const gm_buffer *b, gm_buffer *c)
{
    void **handle = gm_cu_blas_handle(dev);
    int rc = *handle ? GM_CUBLAS_STATUS_SUCCESS : blas.create(handle);
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = blas.set_stream(*handle, stream);
    /* alpha and beta in the scale type: float for 32F, int32 for 32I. */
    const float one_f = 1.0f, zero_f = 0.0f;
    const int32_t one_i = 1, zero_i = 0;
    bool integer = x->scale_type == GM_CUDA_R_32I;
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = blas.gemm_ex(*handle, x->transa, x->transb, x->m, x->n, x->k, integer ? (const void *)&one_i : &one_f,
                          (const void *)b->handle, x->a_type, x->lda, (const void *)a->handle, x->b_type, x->ldb,
                          integer ? (const void *)&zero_i : &zero_f, (void *)c->handle, x->c_type, x->ldc, x->compute,
                          GM_CUBLAS_GEMM_DEFAULT);
    return rc;
}

/* cuBLASLt's plan of one GEMM shape: the operation's descriptor, the
 * layouts of A, B, C and D, and the heuristic's algorithm for them with
 * the workspace offered. Made on a shape's first call (its warm-up) and
 * kept, one shape a device, until another shape comes or the device
 * closes (gm_cu_blas_release), so that a timed call of the shape enqueues
 * the matmul alone: making the descriptors and asking the heuristic is
 * host work that a timed call would otherwise count. */
typedef struct {
    gm_cu_gemm_args args;       /* the shape it is for */
    uint64_t workspace_bytes;
    void *op, *layout[4];       /* A, B, C, D */
    gm_cublaslt_heuristic best;
    int found;                  /* 0: cuBLASLt has no algorithm for the shape */
} lt_plan;

static bool same_args(const gm_cu_gemm_args *x, const gm_cu_gemm_args *y)
{
    return x->lt == y->lt && x->transa == y->transa && x->transb == y->transb && x->m == y->m && x->n == y->n &&
           x->k == y->k && x->lda == y->lda && x->ldb == y->ldb && x->ldc == y->ldc && x->a_rows == y->a_rows &&
           x->a_cols == y->a_cols && x->b_rows == y->b_rows && x->b_cols == y->b_cols && x->a_type == y->a_type &&
           x->b_type == y->b_type && x->c_type == y->c_type && x->lt_c_type == y->lt_c_type &&
           x->compute == y->compute && x->scale_type == y->scale_type;
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
static int lt_plan_make(void *handle, const gm_cu_gemm_args *x, uint64_t workspace_bytes, void **out)
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
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.layout_create(&p->layout[0], x->a_type, (uint64_t)x->a_rows, (uint64_t)x->a_cols, x->lda);
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.layout_create(&p->layout[1], x->b_type, (uint64_t)x->b_rows, (uint64_t)x->b_cols, x->ldb);
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.layout_create(&p->layout[2], x->lt_c_type, (uint64_t)x->m, (uint64_t)x->n, x->ldc);
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.layout_create(&p->layout[3], x->c_type, (uint64_t)x->m, (uint64_t)x->n, x->ldc);
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.pref_create(&pref);
    if (rc == GM_CUBLAS_STATUS_SUCCESS)
        rc = lt.pref_set(pref, GM_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &p->workspace_bytes,
                         sizeof p->workspace_bytes);
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
    lt_plan *p = *slot;
    if (!p || !same_args(&p->args, x) || p->workspace_bytes != workspace_bytes) {
        lt_plan_free(p);
        *slot = NULL;
        rc = lt_plan_make(*handle, x, workspace_bytes, slot);
        if (rc != GM_CUBLAS_STATUS_SUCCESS)
            return rc;
        p = *slot;
    }
    *no_algo = p->found == 0;
    if (*no_algo)
        return rc;
    /* beta is 0: C is not read (and may be NULL). */
    const float one = 1.0f, zero = 0.0f;
    return lt.matmul(*handle, p->op, &one, (const void *)b->handle, p->layout[0], (const void *)a->handle,
                     p->layout[1], &zero, NULL, p->layout[2], (void *)c->handle, p->layout[3], p->best.algo,
                     (void *)workspace, (size_t)workspace_bytes, stream);
}

gm_status gm_cu_blas_gemm(gm_device *dev, int queue, const gm_gemm *g, const gm_buffer *a, const gm_buffer *b,
                          gm_buffer *c)
{
    gm_gemm planned = *g;
    gm_cu_gemm_args args;
    gm_status st = plan(dev, &planned, &args);
    if (st != GM_OK)
        return st;
    if (planned.b_nk != g->b_nk)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "cuBLAS: b is stored [%s] where the plan needs [%s]",
                              g->b_nk ? "n, k" : "k, n", planned.b_nk ? "n, k" : "k, n");
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
    void **plan = gm_cu_blaslt_plan_slot(dev);
    if (*plan && load_cublaslt())
        lt_plan_free(*plan);
    *plan = NULL;
    handle = gm_cu_blaslt_handle(dev);
    if (*handle && load_cublaslt())
        lt.destroy(*handle);
    *handle = NULL;
}
