/*
 * CLBlast for the OpenCL backend, loaded at run time (libclblast.so.1) so
 * that gpumem starts without it; without it the BLAS variant of a
 * workload is `unsupported`.
 */
#include "backend/opencl/opencl_private.h"

#include <dlfcn.h>
#include <stdio.h>

/* From clblast_c.h (stable C API): enum values and the Sgemm signature. */
enum { CLBLAST_ROW_MAJOR = 101, CLBLAST_NO_TRANSPOSE = 111 };
typedef int (*sgemm_fn)(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k,
                        float alpha, cl_mem a, size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset,
                        size_t b_ld, float beta, cl_mem c, size_t c_offset, size_t c_ld,
                        cl_command_queue *queue, cl_event *event);

static sgemm_fn sgemm;
static int load_state;   /* 0 not tried, 1 loaded, -1 missing */

static sgemm_fn load(void)
{
    if (load_state == 0) {
        void *lib = dlopen("libclblast.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib)
            *(void **)&sgemm = dlsym(lib, "CLBlastSgemm");
        load_state = sgemm ? 1 : -1;
    }
    return sgemm;
}

gm_status gm_cl_blas_sgemm(gm_device *dev, int queue, size_t m, size_t n, size_t k, const gm_buffer *a,
                           const gm_buffer *b, gm_buffer *c)
{
    if (!load())
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "CLBlast not found (libclblast.so.1; install libclblast1)");
    if (a->kind != GM_MEM_DEVICE || b->kind != GM_MEM_DEVICE || c->kind != GM_MEM_DEVICE)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "CLBlast works on device buffers only");
    cl_command_queue q = gm_cl_queue(dev, queue);
    int rc = sgemm(CLBLAST_ROW_MAJOR, CLBLAST_NO_TRANSPOSE, CLBLAST_NO_TRANSPOSE, m, n, k, 1.0f,
                   (cl_mem)a->handle, 0, k, (cl_mem)b->handle, 0, n, 0.0f, (cl_mem)c->handle, 0, n, &q, NULL);
    if (rc == CL_MEM_OBJECT_ALLOCATION_FAILURE || rc == CL_OUT_OF_HOST_MEMORY)
        return gm_device_fail(dev, GM_ERR_OOM, rc, "CLBlastSgemm: out of memory (%d)", rc);
    if (rc != 0)
        return gm_device_fail(dev, GM_ERR_INVALID, rc, "CLBlastSgemm failed with status %d", rc);
    return GM_OK;
}
