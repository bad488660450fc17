/*
 * The CUDA driver as the backend's files share it (cuda_private.h): the
 * driver API loaded at run time, failures in the device's error, and an
 * open device's state (its context, streams and the vendor GEMM's
 * handles and workspace). The lowest of the backend's files but
 * cuda_errors.c: cuda.c (the ops), cuda_blas.c and cuda_hold.c use it.
 */
#include "backend/cuda/cuda_private.h"

#include <dlfcn.h>
#include <stdio.h>

static gm_cu_api api;
static const gm_cu_api *cu;
static int load_state;          /* 0 not tried, 1 loaded, -1 failed */
static char load_error[256];

#define ST(dev) gm_cu_state_of(dev)

const char *gm_cu_error_name(CUresult rc)
{
    const char *s = NULL;
    if (cu && cu->GetErrorName(rc, &s) == CUDA_SUCCESS && s)
        return s;
    return "CUDA_ERROR_UNKNOWN";
}

const char *gm_cu_error_text(CUresult rc)
{
    const char *s = NULL;
    if (cu && cu->GetErrorString(rc, &s) == CUDA_SUCCESS && s)
        return s;
    return "unknown error";
}

const gm_cu_api *gm_cu_load(char *why, size_t why_len)
{
    if (load_state == 0) {
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        load_state = -1;
        if (!lib) {
            snprintf(load_error, sizeof load_error, "libcuda.so.1 not found: no NVIDIA driver");
        } else {
            load_state = 1;
#define GM_CU_LOAD(field, symbol, ret, args)                                                 \
    if (load_state == 1) {                                                                  \
        *(void **)&api.field = dlsym(lib, symbol);                                          \
        if (!api.field) {                                                                   \
            snprintf(load_error, sizeof load_error, "libcuda.so.1 lacks %s: driver too old", symbol); \
            load_state = -1;                                                                \
        }                                                                                   \
    }
            GM_CU_FUNCS(GM_CU_LOAD)
#undef GM_CU_LOAD
#define GM_CU_LOAD_OPTIONAL(field, symbol, ret, args) *(void **)&api.field = dlsym(lib, symbol);
            GM_CU_OPTIONAL_FUNCS(GM_CU_LOAD_OPTIONAL)
            GM_CU_VERSIONED_FUNCS(GM_CU_LOAD_OPTIONAL)
#undef GM_CU_LOAD_OPTIONAL
            if (!api.EventElapsedTime)
                api.EventElapsedTime = api.EventElapsedTimeV1;   /* drivers before 570 */
            if (load_state == 1 && !api.EventElapsedTime) {
                snprintf(load_error, sizeof load_error, "libcuda.so.1 lacks cuEventElapsedTime: driver too old");
                load_state = -1;
            }
            if (load_state == 1) {
                cu = &api;
                CUresult rc = api.Init(0);
                if (rc != CUDA_SUCCESS) {
                    snprintf(load_error, sizeof load_error, "cuInit failed: %s (%s)", gm_cu_error_name(rc), gm_cu_error_text(rc));
                    load_state = -1;
                    cu = NULL;
                }
            }
        }
    }
    if (load_state < 0) {
        if (why)
            snprintf(why, why_len, "%s", load_error);
        return NULL;
    }
    return cu;
}

gm_status gm_cu_fail(gm_device *dev, CUresult rc, const char *what)
{
    return gm_device_fail(dev, gm_cu_status(rc), (int)rc, "CUDA %s: %s (%s)", what, gm_cu_error_name(rc), gm_cu_error_text(rc));
}

int gm_cu_attribute(CUdevice d, CUdevice_attribute a)
{
    int v = 0;
    return cu->DeviceGetAttribute(&v, a, d) == CUDA_SUCCESS ? v : 0;
}

gm_status gm_cu_enter(gm_device *dev)
{
    CUresult rc = cu->CtxSetCurrent(ST(dev)->ctx);
    return rc == CUDA_SUCCESS ? GM_OK : gm_cu_fail(dev, rc, "cuCtxSetCurrent");
}

CUstream gm_cu_stream_of(gm_device *dev, int q)
{
    return ST(dev)->streams[(q >= 0 && q < GM_MAX_QUEUES) ? q : 0];
}

CUstream gm_cu_stream(gm_device *dev, int queue)
{
    return gm_cu_enter(dev) == GM_OK ? gm_cu_stream_of(dev, queue) : NULL;
}

void **gm_cu_blas_handle(gm_device *dev) { return &ST(dev)->blas; }
void **gm_cu_blaslt_handle(gm_device *dev) { return &ST(dev)->blaslt; }
void **gm_cu_blaslt_plan_slot(gm_device *dev) { return &ST(dev)->lt_plan; }

size_t gm_cu_blaslt_workspace(gm_device *dev, CUdeviceptr *workspace)
{
    gm_cu_state *s = ST(dev);
    if (!s->lt_workspace_tried) {
        s->lt_workspace_tried = true;
        size_t bytes = (size_t)(dev->info.compute_capability >= 90 ? 32 : 4) << 20;
        if (cu->MemAlloc(&s->lt_workspace, bytes) == CUDA_SUCCESS)
            s->lt_workspace_bytes = bytes;
        else
            s->lt_workspace = 0;
    }
    *workspace = s->lt_workspace;
    return s->lt_workspace_bytes;
}

