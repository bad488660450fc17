/* Shared between the CUDA backend's files; nothing outside src/backend/
 * includes it. */
#ifndef GM_CUDA_PRIVATE_H
#define GM_CUDA_PRIVATE_H

#include "backend/handle.h"
#include "backend/cuda/cuda_api.h"

/* The stream `queue` of an open CUDA device; NULL after making its
 * context current failed (dev->err says why). */
CUstream gm_cu_stream(gm_device *dev, int queue);
/* Where the device keeps its cuBLAS handle (NULL until first use). */
void **gm_cu_blas_handle(gm_device *dev);

/* The blas_sgemm op (cuda_blas.c), and the release of its handle. */
gm_status gm_cu_blas_sgemm(gm_device *dev, int queue, size_t m, size_t n, size_t k, const gm_buffer *a,
                           const gm_buffer *b, gm_buffer *c);
void gm_cu_blas_release(gm_device *dev);
/* Where cuBLAS was loaded from (a soname or a path), loading it on first
 * call; NULL when it cannot be found. */
const char *gm_cu_blas_library(void);

#endif
