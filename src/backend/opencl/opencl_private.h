/* Shared between the OpenCL backend's files; nothing outside src/backend/
 * includes it. */
#ifndef GM_OPENCL_PRIVATE_H
#define GM_OPENCL_PRIVATE_H

#include "backend/handle.h"
#include "backend/opencl/opencl_api.h"

/* The command queue `queue` of an open OpenCL device. */
cl_command_queue gm_cl_queue(gm_device *dev, int queue);

/* The blas_sgemm op (opencl_blas.c). */
gm_status gm_cl_blas_sgemm(gm_device *dev, int queue, size_t m, size_t n, size_t k, const gm_buffer *a,
                           const gm_buffer *b, gm_buffer *c);

#endif
