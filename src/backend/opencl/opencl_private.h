/* Shared between the OpenCL backend's files; nothing outside src/backend/
 * includes it. */
#ifndef GM_OPENCL_PRIVATE_H
#define GM_OPENCL_PRIVATE_H

#include "backend/handle.h"
#include "backend/opencl/opencl_api.h"

/* An open OpenCL device's state (dev->priv). */
typedef struct {
    cl_context ctx;
    cl_command_queue queues[GM_MAX_QUEUES];
    cl_device_id id;
    cl_device_svm_capabilities svm;
} gm_cl_state;

static inline gm_cl_state *gm_cl_state_of(gm_device *dev) { return (gm_cl_state *)dev->priv; }

/* The command queue `queue` of an open OpenCL device (queue 0 for one out
 * of range). */
static inline cl_command_queue gm_cl_queue(gm_device *dev, int queue)
{
    return gm_cl_state_of(dev)->queues[(queue >= 0 && queue < GM_MAX_QUEUES) ? queue : 0];
}

/* The vendor GEMM ops (opencl_blas.c; backend.h says what they do). */
const char *gm_cl_blas_impl(gm_precision p);
gm_status gm_cl_blas_plan(gm_device *dev, gm_gemm *g);
gm_status gm_cl_blas_gemm(gm_device *dev, int queue, const gm_gemm *g, const gm_buffer *a, const gm_buffer *b,
                          gm_buffer *c);

#endif
