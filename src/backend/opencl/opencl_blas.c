/*
 * The vendor GEMM of the OpenCL backend: CLBlast, loaded at run time
 * (libclblast.so.1) so that gpumem starts without it; without it the
 * vendor rows are `unsupported`. SGEMM for fp32; HGEMM for fp16 on
 * devices with cl_khr_fp16 (CLBlast computes it in half: products and
 * sums, so its plan says GM_ACC_FP16). CLBlast has no bf16, int8 or fp8
 * GEMM.
 */
#include "backend/opencl/opencl_private.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

/* From clblast_c.h (stable C API): enum values and the Sgemm and Hgemm
 * signatures (cl_half is a uint16_t holding the half's bits). */
enum { CLBLAST_ROW_MAJOR = 101, CLBLAST_NO_TRANSPOSE = 111 };
typedef int (*sgemm_fn)(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k,
                        float alpha, cl_mem a, size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset,
                        size_t b_ld, float beta, cl_mem c, size_t c_offset, size_t c_ld,
                        cl_command_queue *queue, cl_event *event);
typedef int (*hgemm_fn)(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k,
                        uint16_t alpha, cl_mem a, size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset,
                        size_t b_ld, uint16_t beta, cl_mem c, size_t c_offset, size_t c_ld,
                        cl_command_queue *queue, cl_event *event);
#define HALF_ONE 0x3c00u
#define HALF_ZERO 0x0000u

static sgemm_fn sgemm;
static hgemm_fn hgemm;
static int load_state;   /* 0 not tried, 1 loaded, -1 missing */

static bool load(void)
{
    if (load_state == 0) {
        void *lib = dlopen("libclblast.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            *(void **)&sgemm = dlsym(lib, "CLBlastSgemm");
            *(void **)&hgemm = dlsym(lib, "CLBlastHgemm");
        }
        load_state = sgemm && hgemm ? 1 : -1;
    }
    return load_state > 0;
}

const char *gm_cl_blas_impl(gm_precision p)
{
    /* fp8: a row that says CLBlast has none, never a silent fallback. */
    return p == GM_FP32 || p == GM_FP16 || GM_PREC_IS_FP8(p) ? "clblast" : NULL;
}

gm_status gm_cl_blas_plan(gm_device *dev, gm_gemm *g)
{
    g->b_nk = false;
    g->acc = g->prec == GM_FP16 ? GM_ACC_FP16 : GM_ACC_FP32;
    if (g->prec != GM_FP32 && g->prec != GM_FP16)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "CLBlast has no %s GEMM",
                              GM_PREC_IS_FP8(g->prec) ? "fp8" : gm_precision_name(g->prec));
    if (!load())
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "CLBlast not found (libclblast.so.1; install libclblast1)");
    if (g->prec == GM_FP16 && !dev->info.has_fp16_native)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "CLBlast's HGEMM needs cl_khr_fp16, which %s lacks",
                              dev->info.name);
    return GM_OK;
}

gm_status gm_cl_blas_gemm(gm_device *dev, int queue, const gm_gemm *g, const gm_buffer *a, const gm_buffer *b,
                          gm_buffer *c)
{
    gm_gemm planned = *g;
    gm_status st = gm_cl_blas_plan(dev, &planned);
    if (st != GM_OK)
        return st;
    if (a->kind != GM_MEM_DEVICE || b->kind != GM_MEM_DEVICE || c->kind != GM_MEM_DEVICE)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "CLBlast works on device buffers only");
    cl_command_queue q = gm_cl_queue(dev, queue);
    size_t m = g->m, n = g->n, k = g->k;
    const char *call = g->prec == GM_FP16 ? "CLBlastHgemm" : "CLBlastSgemm";
    int rc = g->prec == GM_FP16
                 ? hgemm(CLBLAST_ROW_MAJOR, CLBLAST_NO_TRANSPOSE, CLBLAST_NO_TRANSPOSE, m, n, k, HALF_ONE,
                         (cl_mem)a->handle, 0, k, (cl_mem)b->handle, 0, n, HALF_ZERO, (cl_mem)c->handle, 0, n, &q, NULL)
                 : sgemm(CLBLAST_ROW_MAJOR, CLBLAST_NO_TRANSPOSE, CLBLAST_NO_TRANSPOSE, m, n, k, 1.0f,
                         (cl_mem)a->handle, 0, k, (cl_mem)b->handle, 0, n, 0.0f, (cl_mem)c->handle, 0, n, &q, NULL);
    if (rc == CL_MEM_OBJECT_ALLOCATION_FAILURE || rc == CL_OUT_OF_HOST_MEMORY)
        return gm_device_fail(dev, GM_ERR_OOM, rc, "%s: out of memory (%d)", call, rc);
    if (rc != 0)
        return gm_device_fail(dev, GM_ERR_INVALID, rc, "%s failed with status %d", call, rc);
    return GM_OK;
}
