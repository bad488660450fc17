/*
 * Portability header: prepended to every kernel source (kernels/NAME.cl) by both
 * backends (the OpenCL driver at run time, nvcc at build time), so that one
 * source builds as OpenCL C 1.2 and as CUDA.
 *
 * Variant defines (both backends, from the variant key, e.g. "fp16-chunked"):
 *   precision  GM_FP32 | GM_FP16 | GM_BF16 | GM_INT8   (storage type)
 *   access     GM_GRID (grid-stride, coalesced: GPUs)
 *              GM_CHUNKED (one contiguous slice per work item: CPUs)
 *
 * Storage and arithmetic: values are stored as gm_store_t and computed in
 * float. fp16 goes through vload_half/vstore_half (no extension needed),
 * bf16 is a bit pattern (round to nearest even on store), int8 is a
 * symmetric quantisation with a per-tensor scale (value = q * scale).
 */
#ifndef GM_PORTABLE_H
#define GM_PORTABLE_H

#if defined(__CUDACC__) || defined(__CUDA_ARCH__)
#define GM_CUDA 1
#include <cuda_fp16.h>
#define GM_KERNEL extern "C" __global__ void
#define GM_GLOBAL
#define GM_LOCAL_DECL __shared__ /* a local-memory array declaration */
#define GM_LOCAL                  /* a pointer into local memory */
#define GM_CONST const
#define GM_INLINE static __device__ __forceinline__
#define GM_RESTRICT __restrict__
#define gm_global_id() ((size_t)blockIdx.x * blockDim.x + threadIdx.x)
#define gm_global_size() ((size_t)gridDim.x * blockDim.x)
#define gm_local_id() ((size_t)threadIdx.x)
#define gm_local_size() ((size_t)blockDim.x)
#define gm_group_id() ((size_t)blockIdx.x)
#define gm_num_groups() ((size_t)gridDim.x)
#define gm_barrier() __syncthreads()
typedef unsigned short gm_u16;
typedef signed char gm_i8;
typedef unsigned int gm_u32;
GM_INLINE float gm_u32_as_float(gm_u32 u) { return __uint_as_float(u); }
GM_INLINE gm_u32 gm_float_as_u32(float f) { return __float_as_uint(f); }
GM_INLINE float gm_half_load(const gm_u16 *p, size_t i) { return __half2float(__ushort_as_half(p[i])); }
GM_INLINE void gm_half_store(gm_u16 *p, size_t i, float v) { p[i] = __half_as_ushort(__float2half_rn(v)); }
GM_INLINE float gm_rint(float v) { return rintf(v); }
GM_INLINE float gm_clampf(float v, float lo, float hi) { return fminf(fmaxf(v, lo), hi); }
#else
#define GM_OPENCL 1
#define GM_KERNEL __kernel void
#define GM_GLOBAL __global
#define GM_LOCAL_DECL __local
#define GM_LOCAL __local
#define GM_CONST const
#define GM_INLINE static inline
#define GM_RESTRICT restrict
#define gm_global_id() get_global_id(0)
#define gm_global_size() get_global_size(0)
#define gm_local_id() get_local_id(0)
#define gm_local_size() get_local_size(0)
#define gm_group_id() get_group_id(0)
#define gm_num_groups() get_num_groups(0)
#define gm_barrier() barrier(CLK_LOCAL_MEM_FENCE)
typedef ushort gm_u16;
typedef char gm_i8;
typedef uint gm_u32;
GM_INLINE float gm_u32_as_float(gm_u32 u) { return as_float(u); }
GM_INLINE gm_u32 gm_float_as_u32(float f) { return as_uint(f); }
GM_INLINE float gm_half_load(const __global gm_u16 *p, size_t i) { return vload_half(i, (const __global half *)p); }
GM_INLINE void gm_half_store(__global gm_u16 *p, size_t i, float v) { vstore_half_rte(v, i, (__global half *)p); }
GM_INLINE float gm_rint(float v) { return rint(v); }
GM_INLINE float gm_clampf(float v, float lo, float hi) { return fmin(fmax(v, lo), hi); }
#endif

/* bf16: the top 16 bits of an fp32, rounded to nearest even on store. */
GM_INLINE float gm_bf16_to_float(gm_u16 b) { return gm_u32_as_float(((gm_u32)b) << 16); }
GM_INLINE gm_u16 gm_float_to_bf16(float f)
{
    gm_u32 u = gm_float_as_u32(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
        return (gm_u16)((u >> 16) | 0x40u);          /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (gm_u16)(u >> 16);
}

/* gm_t: the storage type; GM_LOAD/GM_STORE convert to and from float. */
#if defined(GM_FP32)
typedef float gm_t;
#define GM_LOAD(p, i, scale) ((p)[i])
#define GM_STORE(p, i, v, scale) ((p)[i] = (v))
#elif defined(GM_FP16)
typedef gm_u16 gm_t;
#define GM_LOAD(p, i, scale) gm_half_load((p), (i))
#define GM_STORE(p, i, v, scale) gm_half_store((p), (i), (v))
#elif defined(GM_BF16)
typedef gm_u16 gm_t;
#define GM_LOAD(p, i, scale) gm_bf16_to_float((p)[i])
#define GM_STORE(p, i, v, scale) ((p)[i] = gm_float_to_bf16(v))
#elif defined(GM_INT8)
typedef gm_i8 gm_t;
#define GM_LOAD(p, i, scale) ((float)(p)[i] * (scale))
#define GM_STORE(p, i, v, scale) ((p)[i] = (gm_i8)gm_clampf(gm_rint((v) / (scale)), -127.0f, 127.0f))
#else
#error "a precision define (GM_FP32, GM_FP16, GM_BF16, GM_INT8) is required"
#endif

/*
 * GM_FOR_EACH(i, n): visits every index in [0, n) exactly once across the
 * launch. GRID walks with a stride of the launch size (adjacent work items
 * touch adjacent elements); CHUNKED gives each work item one contiguous
 * slice (each core streams its own range).
 */
#if defined(GM_CHUNKED)
#define GM_FOR_EACH(i, n)                                                          \
    for (size_t gm_chunk_ = ((n) + gm_global_size() - 1) / gm_global_size(),      \
                i = gm_global_id() * gm_chunk_,                                     \
                gm_end_ = (i + gm_chunk_ < (n)) ? i + gm_chunk_ : (n);             \
         i < gm_end_; i++)
#else
#define GM_FOR_EACH(i, n) for (size_t i = gm_global_id(); i < (n); i += gm_global_size())
#endif

#endif /* GM_PORTABLE_H */
