/* Shared between the OpenCL backend's files; nothing outside src/backend/
 * includes it. */
#ifndef GM_OPENCL_PRIVATE_H
#define GM_OPENCL_PRIVATE_H

#include "backend/handle.h"
#include "backend/opencl/opencl_api.h"

/* The command queue `queue` of an open OpenCL device. */
cl_command_queue gm_cl_queue(gm_device *dev, int queue);

/* The vendor GEMM ops (opencl_blas.c; backend.h says what they do). */
const char *gm_cl_blas_impl(gm_precision p);
gm_status gm_cl_blas_plan(gm_device *dev, gm_gemm *g);
gm_status gm_cl_blas_gemm(gm_device *dev, int queue, const gm_gemm *g, const gm_buffer *a, const gm_buffer *b,
                          gm_buffer *c);

#endif
