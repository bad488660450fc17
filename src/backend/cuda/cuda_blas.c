/*
 * cuBLAS for the CUDA backend, loaded at run time (libcublas.so.13, .12
 * or libcublas.so; open_library says where from), so that gpumem starts
 * without it; without it the BLAS
 * variant of a workload is `unsupported`. Only the stable v2 entry points
 * are used, declared here to need no cuBLAS header.
 */
#include "backend/cuda/cuda_private.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_ALLOC_FAILED = 3, CUBLAS_OP_N = 0 };
typedef int (*create_fn)(void **handle);
typedef int (*destroy_fn)(void *handle);
typedef int (*set_stream_fn)(void *handle, CUstream stream);
typedef int (*sgemm_fn)(void *handle, int transa, int transb, int m, int n, int k, const float *alpha,
                        const float *a, int lda, const float *b, int ldb, const float *beta, float *c, int ldc);

static struct {
    create_fn create;
    destroy_fn destroy;
    set_stream_fn set_stream;
    sgemm_fn sgemm;
} blas;
static int load_state;   /* 0 not tried, 1 loaded, -1 missing */
static char loaded_from[512];

/* Opens cuBLAS: by soname (the loader's path, LD_LIBRARY_PATH), else from
 * the toolkit's lib64 ($CUDA_HOME, then /usr/local/cuda), where a toolkit
 * install leaves it off the loader's path. libcublas finds its libcublasLt
 * beside itself (its RUNPATH is $ORIGIN). */
static void *open_library(void)
{
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    const char *home = getenv("CUDA_HOME");
    const char *dirs[] = {NULL, home && *home ? home : NULL, "/usr/local/cuda"};
    for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
        if (d > 0 && !dirs[d])
            continue;
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            if (d == 0)
                snprintf(loaded_from, sizeof loaded_from, "%s", names[i]);
            else
                snprintf(loaded_from, sizeof loaded_from, "%s/lib64/%s", dirs[d], names[i]);
            void *lib = dlopen(loaded_from, RTLD_NOW | RTLD_LOCAL);
            if (lib)
                return lib;
        }
    }
    loaded_from[0] = '\0';
    return NULL;
}

static bool load(void)
{
    if (load_state == 0) {
        void *lib = open_library();
        if (lib) {
            *(void **)&blas.create = dlsym(lib, "cublasCreate_v2");
            *(void **)&blas.destroy = dlsym(lib, "cublasDestroy_v2");
            *(void **)&blas.set_stream = dlsym(lib, "cublasSetStream_v2");
            *(void **)&blas.sgemm = dlsym(lib, "cublasSgemm_v2");
        }
        load_state = blas.create && blas.destroy && blas.set_stream && blas.sgemm ? 1 : -1;
    }
    return load_state > 0;
}

const char *gm_cu_blas_library(void)
{
    return load() ? loaded_from : NULL;
}

gm_status gm_cu_blas_sgemm(gm_device *dev, int queue, size_t m, size_t n, size_t k, const gm_buffer *a,
                           const gm_buffer *b, gm_buffer *c)
{
    if (!load())
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0,
                              "cuBLAS not found (libcublas.so.13 or .12 on the loader's path, in $CUDA_HOME/lib64 "
                              "or /usr/local/cuda/lib64)");
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "cuBLAS takes dimensions below 2^31");
    CUstream stream = gm_cu_stream(dev, queue);
    if (!stream)
        return dev->err.code;
    void **handle = gm_cu_blas_handle(dev);
    int rc = *handle ? CUBLAS_STATUS_SUCCESS : blas.create(handle);
    if (rc == CUBLAS_STATUS_SUCCESS)
        rc = blas.set_stream(*handle, stream);
    /* Row-major C = A B is column-major C^T = B^T A^T: swap the operands. */
    const float one = 1.0f, zero = 0.0f;
    if (rc == CUBLAS_STATUS_SUCCESS)
        rc = blas.sgemm(*handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one,
                        (const float *)b->handle, (int)n, (const float *)a->handle, (int)k, &zero,
                        (float *)c->handle, (int)n);
    if (rc == CUBLAS_STATUS_ALLOC_FAILED)
        return gm_device_fail(dev, GM_ERR_OOM, rc, "cuBLAS: allocation failed");
    if (rc != CUBLAS_STATUS_SUCCESS)
        return gm_device_fail(dev, GM_ERR_INVALID, rc, "cuBLAS sgemm failed with status %d", rc);
    return GM_OK;
}

void gm_cu_blas_release(gm_device *dev)
{
    void **handle = gm_cu_blas_handle(dev);
    if (*handle && load())
        blas.destroy(*handle);
    *handle = NULL;
}
