/* Shared between the CUDA backend's files; nothing outside src/backend/
 * includes it. */
#ifndef GM_CUDA_PRIVATE_H
#define GM_CUDA_PRIVATE_H

#include "backend/handle.h"
#include "backend/cuda/cuda_api.h"

/* An open CUDA device's state (dev->priv). */
typedef struct {
    CUdevice device;
    CUcontext ctx;
    CUstream streams[GM_MAX_QUEUES];
    void *blas;                  /* cuBLAS handle, made on first use */
    void *blaslt;                /* cuBLASLt handle, likewise */
    void *lt_plan;               /* cuBLASLt's plan of the last shape (cuda_blas.c), likewise */
    CUdeviceptr lt_workspace;    /* cuBLASLt's workspace, made on first use */
    size_t lt_workspace_bytes;   /* its size; 0 before, or if it could not be had */
    bool lt_workspace_tried;
    bool async_pool_ready;       /* the default pool keeps freed memory */
    CUmemoryPool pool;           /* that pool, once ready */
} gm_cu_state;

static inline gm_cu_state *gm_cu_state_of(gm_device *dev) { return (gm_cu_state *)dev->priv; }

/* The driver's name and text of rc ("CUDA_ERROR_UNKNOWN" and "unknown
 * error" where it has none, or before the driver is loaded). */
const char *gm_cu_error_name(CUresult rc);
const char *gm_cu_error_text(CUresult rc);
/* Attribute a of device d, 0 where the driver does not say. */
int gm_cu_attribute(CUdevice d, CUdevice_attribute a);
/* Makes the device's context current on this thread (GM_OK, or the
 * failure in dev->err). */
gm_status gm_cu_enter(gm_device *dev);
/* The stream `queue` of an open device (stream 0 for one out of range),
 * without making its context current. */
CUstream gm_cu_stream_of(gm_device *dev, int queue);

/* Records the failure of `what` with the driver's name and text for rc
 * in dev->err; returns its status (gm_cu_status). */
gm_status gm_cu_fail(gm_device *dev, CUresult rc, const char *what);
/* The stream `queue` of an open CUDA device; NULL after making its
 * context current failed (dev->err says why). */
CUstream gm_cu_stream(gm_device *dev, int queue);
/* Where the device keeps its cuBLAS and cuBLASLt handles (NULL until
 * first use). */
void **gm_cu_blas_handle(gm_device *dev);
void **gm_cu_blaslt_handle(gm_device *dev);
/* Where the device keeps cuBLASLt's plan of the last GEMM shape
 * (cuda_blas.c owns what it points to; NULL until first use). */
void **gm_cu_blaslt_plan_slot(gm_device *dev);
/* cuBLASLt's workspace on dev (the context current): its size, and its
 * address in *workspace. Made on the first call with cuMemAlloc, outside
 * the suite's accounting like the handles' own memory: 32 MiB from
 * compute capability 9.0 on, else 4 MiB (cuBLAS's recommended workspace
 * sizes); freed when the device closes. 0 (and no address) where that
 * allocation failed: the call then asks for none. */
size_t gm_cu_blaslt_workspace(gm_device *dev, CUdeviceptr *workspace);
/* queue_hold and queue_release (cuda_hold.c; backend.h says what they
 * do): a host function on the stream waits for the release, 100 ms at most. */
gm_status gm_cu_queue_hold(gm_device *dev, int queue, gm_hold **out);
void gm_cu_queue_release(gm_device *dev, gm_hold *h);

/* The vendor GEMM ops (cuda_blas.c; backend.h says what they do), and the
 * release of the device's handles. */
const char *gm_cu_blas_impl(gm_precision p);
gm_status gm_cu_blas_plan(gm_device *dev, gm_gemm *g);
gm_status gm_cu_blas_gemm(gm_device *dev, int queue, const gm_gemm *g, const gm_buffer *a, const gm_buffer *b,
                          gm_buffer *c);
void gm_cu_blas_release(gm_device *dev);
/* Where cuBLAS (cuBLASLt) was loaded from (a soname or a path), loading it
 * on first call; NULL when it cannot be found. */
const char *gm_cu_blas_library(void);
const char *gm_cu_blaslt_library(void);

#endif
