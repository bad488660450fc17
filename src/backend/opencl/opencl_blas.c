/*
 * The vendor GEMM of the OpenCL backend: CLBlast, loaded at run time
 * (libclblast.so.1) so that gpumem starts without it; without it the
 * vendor rows are `unsupported`. SGEMM for fp32; HGEMM for fp16 on
 * devices with cl_khr_fp16 (CLBlast computes it in half: products and
 * sums, so its plan says GM_ACC_FP16). CLBlast has no bf16, int8 or fp8
 * GEMM, and no fp32 result of fp16 inputs (c_fp32). Row-major with either
 * operand transposed, leading dimensions, offsets and beta 1 (accumulate)
 * are CLBlast's own arguments; a batch is one call a product.
 */
#include "backend/opencl/opencl_private.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

/* From clblast_c.h (stable C API): enum values and the Sgemm and Hgemm
 * signatures (cl_half is a uint16_t holding the half's bits). */
enum { CLBLAST_ROW_MAJOR = 101, CLBLAST_NO_TRANSPOSE = 111, CLBLAST_TRANSPOSE = 112 };
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
#define DIM_MAX ((size_t)1 << 31)   /* kept within CLBlast's int arithmetic */

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
    g->tn_only = false;
    g->acc = g->prec == GM_FP16 ? GM_ACC_FP16 : GM_ACC_FP32;
    if (g->prec != GM_FP32 && g->prec != GM_FP16)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "CLBlast has no %s GEMM",
                              GM_PREC_IS_FP8(g->prec) ? "fp8" : gm_precision_name(g->prec));
    if (g->c_fp32 && g->prec != GM_FP32)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "CLBlast's HGEMM writes fp16, not an fp32 result");
    size_t rows_a = g->trans_a ? g->m : g->k, rows_b = g->b_nk ? g->k : g->n;
    if (g->m == 0 || g->n == 0 || g->k == 0 || g->m >= DIM_MAX || g->n >= DIM_MAX || g->k >= DIM_MAX
        || gm_gemm_lda(g) < rows_a || gm_gemm_ldb(g) < rows_b || gm_gemm_ldc(g) < g->n)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "CLBlast takes dimensions from 1 to 2^31 - 1 and leading "
                              "dimensions of at least the stored row's length");
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
    size_t m = g->m, n = g->n, k = g->k, lda = gm_gemm_lda(g), ldb = gm_gemm_ldb(g), ldc = gm_gemm_ldc(g);
    int ta = g->trans_a ? CLBLAST_TRANSPOSE : CLBLAST_NO_TRANSPOSE, tb = g->b_nk ? CLBLAST_TRANSPOSE : CLBLAST_NO_TRANSPOSE;
    const char *call = g->prec == GM_FP16 ? "CLBlastHgemm" : "CLBlastSgemm";
    int rc = 0;
    for (size_t z = 0; z < (g->batch > 1 ? g->batch : 1) && rc == 0; z++) {
        size_t ao = g->a_off + z * g->stride_a, bo = g->b_off + z * g->stride_b, co = g->c_off + z * g->stride_c;
        rc = g->prec == GM_FP16
                 ? hgemm(CLBLAST_ROW_MAJOR, ta, tb, m, n, k, HALF_ONE, (cl_mem)a->handle, ao, lda, (cl_mem)b->handle,
                         bo, ldb, g->accumulate ? HALF_ONE : HALF_ZERO, (cl_mem)c->handle, co, ldc, &q, NULL)
                 : sgemm(CLBLAST_ROW_MAJOR, ta, tb, m, n, k, 1.0f, (cl_mem)a->handle, ao, lda, (cl_mem)b->handle, bo,
                         ldb, g->accumulate ? 1.0f : 0.0f, (cl_mem)c->handle, co, ldc, &q, NULL);
    }
    if (rc == CL_MEM_OBJECT_ALLOCATION_FAILURE || rc == CL_OUT_OF_HOST_MEMORY)
        return gm_device_fail(dev, GM_ERR_OOM, rc, "%s: out of memory (%d)", call, rc);
    if (rc != 0)
        return gm_device_fail(dev, GM_ERR_INVALID, rc, "%s failed with status %d", call, rc);
    return GM_OK;
}
