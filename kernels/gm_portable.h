/*
 * Portability header: prepended to every kernel source (kernels/NAME.cl) by both
 * backends (the OpenCL driver at run time, nvcc at build time), so that one
 * source builds as OpenCL C 1.2 and as CUDA.
 *
 * Variant defines (both backends, from the variant key, e.g. "fp16-chunked"):
 *   precision  GM_FP32 | GM_FP16 | GM_BF16 | GM_INT8 | GM_FP8E4M3 | GM_FP8E5M2
 *              (storage type of every tensor, or of the activations when a
 *              role token follows)
 *   roles      GM_W<PREC> (weights: e.g. "bf16-wint4-chunked"), GM_KV<PREC>
 *              (KV cache: "bf16-kvfp8e4m3-grid"); absent: the precision above
 *   access     GM_GRID (grid-stride, coalesced: GPUs)
 *              GM_CHUNKED (one contiguous slice per work item: CPUs)
 *
 * Storage and arithmetic: values are stored as gm_store_t and computed in
 * float. fp16 goes through vload_half/vstore_half (no extension needed),
 * bf16 is a bit pattern (round to nearest even on store), int8 is a
 * symmetric quantisation with a per-tensor scale (value = q * scale).
 * fp8 (OCP e4m3, e5m2) is a bit pattern converted in registers, rounded to
 * nearest even on store, bit for bit as src/lib/precision.c does: the
 * portable code on both backends, and where CUDA converts fp8 in hardware
 * (sm_89 and later) the stream kernels' vectors through cuda_fp8.h, the
 * same codes (gm_fp8x4_decode / gm_fp8x4_encode below). int4 (weights
 * only) is two signed nibbles per byte with one fp16 scale per `wgroup`
 * rows of a column (the kernel's `wscale`, `wgroup`).
 */
#ifndef GM_PORTABLE_H
#define GM_PORTABLE_H

/* The CUDA code: under nvcc, or under a host C++ compiler where the
 * includer defines GM_CUDA and the few CUDA names it needs (the host
 * check of the conversions, tests/cuda/stream_cvt_agree.cpp). */
#if defined(__CUDACC__) || defined(__CUDA_ARCH__) || defined(GM_CUDA)
#ifndef GM_CUDA
#define GM_CUDA 1
#endif
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
#define gm_barrier_global() __syncthreads() /* also orders global memory within the group */
typedef unsigned short gm_u16;
typedef unsigned char gm_u8;
typedef signed char gm_i8;
typedef unsigned int gm_u32;
typedef unsigned long long gm_u64;
GM_INLINE float gm_u32_as_float(gm_u32 u) { return __uint_as_float(u); }
GM_INLINE gm_u32 gm_float_as_u32(float f) { return __float_as_uint(f); }
GM_INLINE float gm_half_load(const gm_u16 *p, size_t i) { return __half2float(__ushort_as_half(p[i])); }
GM_INLINE void gm_half_store(gm_u16 *p, size_t i, float v) { p[i] = __half_as_ushort(__float2half_rn(v)); }
GM_INLINE float gm_rint(float v) { return rintf(v); }
GM_INLINE float gm_clampf(float v, float lo, float hi) { return fminf(fmaxf(v, lo), hi); }
GM_INLINE float gm_tanh(float v) { return tanhf(v); }
/* 32-bit atomics on global memory; both return the old value. */
#define gm_atomic_inc(p) atomicAdd((p), 1u)
#define gm_atomic_or(p, v) atomicOr((p), (v))
/* A hint to bring the line at p into the caches; nothing on CUDA. */
#define gm_prefetch(p) ((void)(p))
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
#define gm_barrier_global() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
typedef ushort gm_u16;
typedef uchar gm_u8;
typedef char gm_i8;
typedef uint gm_u32;
typedef ulong gm_u64;
GM_INLINE float gm_u32_as_float(gm_u32 u) { return as_float(u); }
GM_INLINE gm_u32 gm_float_as_u32(float f) { return as_uint(f); }
GM_INLINE float gm_half_load(const __global gm_u16 *p, size_t i) { return vload_half(i, (const __global half *)p); }
GM_INLINE void gm_half_store(__global gm_u16 *p, size_t i, float v) { vstore_half_rte(v, i, (__global half *)p); }
GM_INLINE float gm_rint(float v) { return rint(v); }
GM_INLINE float gm_clampf(float v, float lo, float hi) { return fmin(fmax(v, lo), hi); }
GM_INLINE float gm_tanh(float v) { return tanh(v); }
#define gm_atomic_inc(p) atomic_inc(p)
#define gm_atomic_or(p, v) atomic_or((p), (v))
#define gm_prefetch(p) __builtin_prefetch((const void *)(size_t)(p))
#endif

/*
 * A reproducible input value for element i of a tensor seeded `seed`:
 * k / 128 - 1 for an 8-bit k, times `range` (a power of two), so that it
 * is exact in every storage format (and in int8 with scale range / 128).
 * bench/workloads/block.c computes the same values on the host (gm_hashed_value).
 */
GM_INLINE float gm_hashed_value(gm_u64 i, gm_u32 seed, float range)
{
    gm_u32 h = (gm_u32)i * 0x9e3779b1u ^ (gm_u32)(i >> 32) * 0x85ebca77u ^ seed * 0xc2b2ae3du;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    return (float)((int)(h >> 24) - 128) * (1.0f / 128.0f) * range;
}

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

/*
 * fp8 -> float and float -> fp8 (M mantissa bits, exponent bias `bias`;
 * e4m3 saturates, e5m2 overflows to inf; NaN stores as 0x7f). The same
 * steps as src/lib/precision.c's float_to_fp8.
 */
/* Decoding without branches (selects vectorise): the 7 bits after the
 * sign, moved to the top of an fp32 mantissa and rebiased, are the value
 * for normal codes; subnormals are m * 2^(1 - bias - M), exact. */
GM_INLINE float gm_fp8e4m3_to_float(gm_u32 c)
{
    gm_u32 sign = (c & 0x80u) << 24, e = (c >> 3) & 0xfu, m = c & 7u;
    gm_u32 normal = sign | (((c & 0x7fu) << 20) + (120u << 23));
    gm_u32 sub = gm_float_as_u32((float)m * 0.001953125f) | sign;
    gm_u32 bits = e ? normal : sub;
    return gm_u32_as_float((c & 0x7fu) == 0x7fu ? (0x7fc00000u | sign) : bits);
}
GM_INLINE float gm_fp8e5m2_to_float(gm_u32 c)
{
    gm_u32 sign = (c & 0x80u) << 24, e = (c >> 2) & 0x1fu, m = c & 3u;
    gm_u32 normal = sign | (((c & 0x7fu) << 21) + (112u << 23));
    gm_u32 sub = gm_float_as_u32((float)m * 1.52587890625e-05f) | sign;
    gm_u32 special = sign | 0x7f800000u | (m ? 0x00400000u : 0u);
    gm_u32 bits = e ? normal : sub;
    return gm_u32_as_float(e == 31u ? special : bits);
}
GM_INLINE gm_u8 gm_float_to_fp8(float f, gm_u32 M, int bias, int saturate)
{
    gm_u32 u = gm_float_as_u32(f);
    gm_u32 sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
    gm_u32 maxcode = saturate ? 0x7eu : 0x7bu, over = saturate ? 0x7eu : 0x7cu;
    if (a > 0x7f800000u)
        return (gm_u8)0x7fu;
    if (a < 0x00800000u)
        return (gm_u8)sign;
    int e = (int)(a >> 23) - 127, emin = 1 - bias;
    gm_u32 mant = (a & 0x007fffffu) | 0x00800000u, q, rem, tie;
    if (e < emin) {
        int shift = 23 - (int)M + emin - e;
        if (shift >= 25)
            return (gm_u8)sign;
        q = mant >> shift;
        rem = mant & ((1u << shift) - 1u);
        tie = 1u << (shift - 1);
    } else {
        if (e + bias > 31)
            return (gm_u8)(sign | over);
        q = ((gm_u32)(e + bias) << M) | ((a & 0x007fffffu) >> (23u - M));
        rem = a & ((1u << (23u - M)) - 1u);
        tie = 1u << (22u - M);
    }
    if (rem > tie || (rem == tie && (q & 1u)))
        q++;
    return (gm_u8)(q > maxcode ? sign | over : sign | q);
}
GM_INLINE gm_u8 gm_float_to_fp8e4m3(float f) { return gm_float_to_fp8(f, 3u, 7, 1); }
GM_INLINE gm_u8 gm_float_to_fp8e5m2(float f) { return gm_float_to_fp8(f, 2u, 15, 0); }

/*
 * fp8 in half units, for code that converts many values at a time (the
 * stream kernels): the same codes and values as the conversions above,
 * bit for bit, with fewer and branch-free steps. An e5m2 code is the top
 * byte of an fp16; an e4m3 code's seven low bits, one place lower, are
 * the low bits of the fp16 of its value times 2^-8 (fp16 and e4m3 share
 * the layout of exponent and mantissa; the exponent biases differ by 8).
 * So a code decodes through the fp16 hardware conversion (F16C on x86,
 * cvt on CUDA) to its value in half units: e4m3's times 2^-8, e5m2's as
 * they are. In those units both formats are fp16 rounded to M mantissa
 * bits (e4m3: at most the code `top` 0x7e, 448 saturated; e5m2: 0x7c,
 * infinity), so one encoder serves both:
 *   |y| >= 2^-14 (normal): the float's bits, rounded to M mantissa bits
 *     to nearest even by integer addition, rebiased from fp32's 127 to
 *     fp16's 15, capped at `top` (the rounding carries into the exponent
 *     as it should, and every larger value or infinity lands at or above
 *     top);
 *   |y| < 2^-14 (subnormal): |y| + 2^(9 - M), whose ulp is the format's
 *     subnormal spacing 2^(-14 - M), rounds |y| to a multiple of it (to
 *     nearest even, in the adder); the code is that multiple;
 *   NaN: 0x7f; the sign is the float's.
 * gm_fp8_half_decode / gm_fp8_half_encode: one value (both backends).
 * OpenCL also has 16 at a time (gm_fp8x16_half_decode / _encode), where
 * the encoder lets the fp16 conversion do most of the work: truncated to
 * fp16 (of the conversions down and up, the one of smaller magnitude),
 * with the last bit set where they differ, i.e. where the truncation
 * dropped bits (round to odd: rounding on to M bits then cannot round
 * twice), then rounded to M mantissa bits to nearest even by integer
 * addition on the fp16 bits. In e5m2 the result is the top byte, sign and
 * all (a finite overflow rounds up to 0x7c, infinity); e4m3's is capped
 * at `top`.
 */
#define GM_FP8_HALF_UNIT_E4M3 256.0f /* an e4m3 value in half units is value * 2^-8 */
#if defined(GM_CUDA)
GM_INLINE float gm_half_bits_to_float(gm_u32 h) { return __half2float(__ushort_as_half((unsigned short)h)); }
#else
GM_INLINE float gm_half_bits_to_float(gm_u32 h)
{
    ushort bits = (ushort)h;
    return vload_half(0, (const __private half *)&bits);
}
#endif
/* The fp16 bits of code c's value in half units. */
GM_INLINE gm_u32 gm_fp8_half_bits(gm_u32 c, int e4m3)
{
    gm_u32 x = (c & 0xffu) << 8;
    if (!e4m3)
        return x;
    return (x & 0x7f00u) == 0x7f00u ? 0x7e00u : (x & 0x8000u) | ((x & 0x7f00u) >> 1);
}
GM_INLINE float gm_fp8_half_decode(gm_u32 c, int e4m3) { return gm_half_bits_to_float(gm_fp8_half_bits(c, e4m3)); }
GM_INLINE gm_u8 gm_fp8_half_encode(float y, gm_u32 M, gm_u32 top)
{
    gm_u32 u = gm_float_as_u32(y), a = u & 0x7fffffffu;
    gm_u32 qn = (a + ((1u << (22u - M)) - 1u) + ((a >> (23u - M)) & 1u) - (112u << 23)) >> (23u - M);
    float magic = gm_u32_as_float((136u - M) << 23);   /* 2^(9 - M) */
    gm_u32 qs = gm_float_as_u32(gm_u32_as_float(a) + magic) - gm_float_as_u32(magic);
    gm_u32 q = a < 0x38800000u ? qs : (qn < top ? qn : top);
    return (gm_u8)(a > 0x7f800000u ? 0x7fu : q | ((u >> 24) & 0x80u));
}
/*
 * fp8 four codes (one 32-bit word) at a time, in values (raw unit 1), on
 * CUDA: cuda_fp8.h's conversions of two codes, which compile to the
 * hardware's (PTX cvt ... e4m3x2 / e5m2x2, one instruction for two codes)
 * on sm_89 and later, where GM_FP8_CVT is defined and the stream kernels
 * use them, and to NVIDIA's software elsewhere (the host included). The
 * codes and values are those of the scalar conversions above, bit for
 * bit, but for a NaN's sign and payload when decoded (every NaN code
 * gives the one fp16 NaN 0x7fff: a NaN either way):
 *   decode: cvt to fp16 (exact: both formats fit in fp16), then to float;
 *   encode: cvt with satfinite (round to nearest even; NaN to a NaN code,
 *     0x7f in cuda_fp8.h's software; finite overflow and infinity to the
 *     largest finite code, sign kept). That is e4m3's saturation at 0x7e
 *     (448). e5m2 overflows to infinity instead: the inputs that round
 *     past 57344 (|x| >= 61440, infinity included) get satfinite's 0x7b,
 *     and one more, 0x7c, is infinity (the sign bit untouched); a NaN
 *     compares false.
 * tests/cuda/stream_cvt_agree.cpp checks both, cuda_fp8.h's host software
 * standing in for the instructions, against src/lib/precision.c for all
 * 256 codes and all 2^32 floats.
 * gm_fp8x4_decode(w, e4m3, out): the codes w & 0xff, (w >> 8) & 0xff, ...
 * to out[0..3]; gm_fp8x4_encode(in, e4m3): the codes of in[0..3], in[0]'s
 * in the low byte.
 */
#if defined(GM_CUDA)
#include <cuda_fp8.h>
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define GM_FP8_CVT 1
#endif
GM_INLINE void gm_fp8x4_decode(gm_u32 w, int e4m3, float *out)
{
    const __nv_fp8_interpretation_t fmt = e4m3 ? __NV_E4M3 : __NV_E5M2;
    __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(w & 0xffffu), fmt);
    __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(w >> 16), fmt);
    out[0] = __half2float(__ushort_as_half(lo.x));
    out[1] = __half2float(__ushort_as_half(lo.y));
    out[2] = __half2float(__ushort_as_half(hi.x));
    out[3] = __half2float(__ushort_as_half(hi.y));
}
GM_INLINE gm_u32 gm_fp8x4_encode(const float *in, int e4m3)
{
    const __nv_fp8_interpretation_t fmt = e4m3 ? __NV_E4M3 : __NV_E5M2;
    float2 lo, hi;
    lo.x = in[0];
    lo.y = in[1];
    hi.x = in[2];
    hi.y = in[3];
    gm_u32 w = (gm_u32)__nv_cvt_float2_to_fp8x2(lo, __NV_SATFINITE, fmt)
               | (gm_u32)__nv_cvt_float2_to_fp8x2(hi, __NV_SATFINITE, fmt) << 16;
    if (!e4m3)   /* 0x7b -> 0x7c in each byte where e5m2 overflows */
        for (int b = 0; b < 4; b++)
            w += fabsf(in[b]) >= 61440.0f ? 1u << (8 * b) : 0u;
    return w;
}

/*
 * The stream kernels' other narrow words on CUDA, with the instructions
 * that do a word's work at once instead of an element's. Each gives the
 * codes and values of src/lib/precision.c (gm_store, gm_load; int8 in raw
 * units, scale 1), bit for bit, but for a NaN's payload:
 *   gm_f16x2_encode(a, b), gm_bf16x2_encode(a, b): the fp16 / bf16 codes
 *     of a (low half) and b, rounded to nearest even: cuda_fp16.h's and
 *     cuda_bf16.h's pair conversions, one cvt ... f16x2 / bf16x2
 *     instruction for both from sm_80 on, software before (and on the
 *     host); a NaN gives a NaN code.
 *   gm_i8x4_decode(w, out): the signed bytes w & 0xff, (w >> 8) & 0xff,
 *     ... to out[0..3]. Each byte, its sign bit flipped, is placed
 *     (byte_perm) in the low bits of 2^23's pattern: the float 2^23 + 128
 *     + the byte, less 2^23 + 128, exactly. A byte_perm and an add, where
 *     an integer-to-float conversion runs at 16 a clock per multiprocessor
 *     (sm_80, sm_90: a quarter, an eighth of the float add's rate) and
 *     would bound an int8 stream kernel's element rate below the memory's.
 *   gm_i8x4_encode(in): clamp(rint(x), -127, 127) of in[0..3] (a NaN to
 *     -127), in[0]'s in the low byte. x + 1.5 * 2^23 rounds x to the
 *     nearest integer, ties to even, where |x| < 2^22, and grows with x
 *     everywhere; clamped to 1.5 * 2^23 -+ 127 (fmaxf: a NaN, quieted by
 *     the add, to the lower bound), its low byte is clamp(rint(x), -127,
 *     127) in two's complement; two byte_perms gather the four. No
 *     conversion instruction either.
 *   gm_byte_ramp(k): below.
 * tests/cuda/stream_cvt_agree.cpp checks them on the host against
 * precision.c: every byte, every 257th float (or all 2^32).
 */
#include <cuda_bf16.h>
GM_INLINE gm_u32 gm_f16x2_encode(float a, float b)
{
    __half2 h = __floats2half2_rn(a, b);
    return (gm_u32)__half_as_ushort(__low2half(h)) | (gm_u32)__half_as_ushort(__high2half(h)) << 16;
}
GM_INLINE gm_u32 gm_bf16x2_encode(float a, float b)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return (gm_u32)__bfloat16_as_ushort(__low2bfloat16(h)) | (gm_u32)__bfloat16_as_ushort(__high2bfloat16(h)) << 16;
}
GM_INLINE void gm_i8x4_decode(gm_u32 w, float *out)
{
    const gm_u32 flipped = w ^ 0x80808080u;
    for (int b = 0; b < 4; b++)   /* result bytes: byte b of flipped, then 0x00, 0x00, 0x4b */
        out[b] = gm_u32_as_float(__byte_perm(flipped, 0x4b000000u, 0x7650u + (gm_u32)b)) - 8388736.0f;
}
/* ((k & 255) - 128) / 128, the stream write kernel's values, without a
 * conversion either: 2^23 + (k & 255) from its pattern, then one fused
 * multiply-add whose result is exact: (2^23 + k') / 128 - 65537. */
GM_INLINE float gm_byte_ramp(gm_u32 k)
{
    return fmaf(gm_u32_as_float(0x4b000000u | (k & 255u)), 1.0f / 128.0f, -65537.0f);
}
GM_INLINE gm_u32 gm_i8x4_encode(const float *in)
{
    gm_u32 q[4];
    for (int b = 0; b < 4; b++)
        q[b] = gm_float_as_u32(fminf(fmaxf(in[b] + 12582912.0f, 12582785.0f), 12583039.0f));
    /* low bytes of q[0], q[1] and of q[2], q[3], then the two halves */
    return __byte_perm(__byte_perm(q[0], q[1], 0x0040u), __byte_perm(q[2], q[3], 0x0040u), 0x5410u);
}
#endif
#if defined(GM_OPENCL)
/*
 * 16 fp16 bit patterns to floats (exact), and 16 floats to fp16 rounded
 * down (toward -inf) and up: vload_half16 and vstore_half16_rtn / _rtp,
 * which an x86 CPU compiler (PoCL) splits into conversions of 8 and the
 * shuffles that join them; with AVX-512 one conversion of 16 does each
 * (vcvtph2ps, vcvtps2ph with its rounding in the immediate: 1 down, 2
 * up), the same results.
 */
#if defined(__AVX512F__) && defined(__clang__)
#define GM_X86_AVX512 1
#endif
GM_INLINE float16 gm_half16_to_float(ushort16 h)
{
#if defined(GM_X86_AVX512)
    return __builtin_ia32_vcvtph2ps512_mask(as_short16(h), (float16)(0.0f), (ushort)0xffffu, 4);
#else
    return vload_half16(0, (const __private half *)&h);
#endif
}
GM_INLINE void gm_float16_to_half_down_up(float16 y, ushort16 *down, ushort16 *up)
{
#if defined(GM_X86_AVX512)
    *down = as_ushort16(__builtin_ia32_vcvtps2ph512_mask(y, 1, (short16)(0), (ushort)0xffffu));
    *up = as_ushort16(__builtin_ia32_vcvtps2ph512_mask(y, 2, (short16)(0), (ushort)0xffffu));
#else
    vstore_half16_rtn(y, 0, (__private half *)down);
    vstore_half16_rtp(y, 0, (__private half *)up);
#endif
}
GM_INLINE float16 gm_fp8x16_half_decode(uchar16 c, int e4m3)
{
    ushort16 h;
    if (e4m3) {
        /* sign-extended, moved up seven places: the sign lands in bit
         * 15 and (again) in bit 14, which the mask clears */
        h = as_ushort16(convert_short16(as_char16(c)) << (short)7) & (ushort)0xbfffu;
        h = select(h, (ushort16)0x7e00u, (h & (ushort)0x3f80u) == (ushort)0x3f80u);   /* NaN */
    } else {
        h = convert_ushort16(c) << (ushort)8;   /* the code is the fp16's top byte */
    }
    return gm_half16_to_float(h);
}
GM_INLINE uchar16 gm_fp8x16_half_encode(float16 y, gm_u32 M, gm_u32 top)
{
    ushort16 hd, hu;   /* rounded down and up: the smaller magnitude is the truncation */
    gm_float16_to_half_down_up(y, &hd, &hu);
    ushort16 h = min(hd, hu) | (as_ushort16(hd != hu) & (ushort)1u);
    ushort s = (ushort)(10u - M);
    ushort16 r = (h + (ushort)((1u << (9u - M)) - 1u) + ((h >> s) & (ushort)1u)) >> s;
    if (M == 3u)   /* e4m3: the sign is in bit 8, the magnitude may pass top */
        r = min(r & (ushort)0xffu, (ushort16)top) | ((r >> (ushort)1u) & (ushort)0x80u);
    return convert_uchar16(select(r, (ushort16)0x7fu, (h & (ushort)0x7fffu) > (ushort)0x7c00u));
}

/*
 * int8 arithmetic in 16-bit lanes (OpenCL), as int8 kernels compute on
 * the stored integers:
 *   gm_q15(s): s in Q15 fixed point, s * 2^15 rounded to nearest; valid
 *     where gm_q15_fits(s), i.e. |s| < 1.
 *   gm_i8x16_mul_q15(q, k): q * k / 2^15 rounded to nearest, halves up
 *     ((q * k + 2^14) >> 15). For k = gm_q15(s) that is q * s moved by at
 *     most 128 * 2^-16 = 2^-9 before the rounding, so it is rint(q * s)
 *     wherever q * s is further than 2^-9 from a half (the stream suite's
 *     s = 0.4 gives multiples of 0.2: every q), and one off at most
 *     where it is not. Int8 requantisation multiplies so (a fixed-point
 *     multiplier, no float per element).
 *   gm_i8x16_dot_pairs(a, b): lane l of 8 is a[2l] b[2l] + a[2l+1] b[2l+1],
 *     exact (at most 2^15 in magnitude).
 * An x86 CPU compiler with AVX2 (PoCL) gets one instruction for each:
 * vpmulhrsw and vpmaddwd, which it does not find in the spelt-out
 * arithmetic (32-bit multiplies, several instructions a vector); every
 * other compiler gets the arithmetic, the same results.
 */
#if defined(__AVX2__)
#define GM_X86_AVX2 1
#endif
GM_INLINE int gm_q15_fits(float s) { return fabs(s) < 1.0f; }
GM_INLINE short gm_q15(float s) { return (short)clamp(rint(s * 32768.0f), -32767.0f, 32767.0f); }
GM_INLINE short16 gm_i8x16_mul_q15(char16 q, short k)
{
#if defined(GM_X86_AVX2)
    return as_short16(__builtin_ia32_pmulhrsw256(convert_short16(q), (short16)k));
#else
    return convert_short16((convert_int16(q) * (int)k + 0x4000) >> 15);
#endif
}
GM_INLINE int8 gm_i8x16_dot_pairs(char16 a, char16 b)
{
    short16 x = convert_short16(a), y = convert_short16(b);
#if defined(GM_X86_AVX2)
    return as_int8(__builtin_ia32_pmaddwd256(x, y));
#else
    return convert_int8(x.even) * convert_int8(y.even) + convert_int8(x.odd) * convert_int8(y.odd);
#endif
}
#endif

/* int4 weight kk, j of a [k, n] matrix: element i = kk * n + j, nibble
 * i & 1 of byte i / 2, times the fp16 scale of its group of rows. */
#if defined(GM_CUDA)
GM_INLINE float gm_int4_load(const gm_u8 *p, const gm_u16 *ws, size_t i, size_t g)
#else
GM_INLINE float gm_int4_load(const __global gm_u8 *p, const __global gm_u16 *ws, size_t i, size_t g)
#endif
{
    int q = (int)((p[i >> 1] >> (4u * (gm_u32)(i & 1u))) & 0xfu);
    return (float)(q >= 8 ? q - 16 : q) * gm_half_load(ws, g);
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
#elif defined(GM_FP8E4M3)
typedef gm_u8 gm_t;
#define GM_LOAD(p, i, scale) gm_fp8e4m3_to_float((p)[i])
#define GM_STORE(p, i, v, scale) ((p)[i] = gm_float_to_fp8e4m3(v))
#elif defined(GM_FP8E5M2)
typedef gm_u8 gm_t;
#define GM_LOAD(p, i, scale) gm_fp8e5m2_to_float((p)[i])
#define GM_STORE(p, i, v, scale) ((p)[i] = gm_float_to_fp8e5m2(v))
#else
#error "a precision define (GM_FP32, GM_FP16, GM_BF16, GM_INT8, GM_FP8E4M3, GM_FP8E5M2) is required"
#endif

/* The scale of an int4 group whose largest magnitude is amax, before its
 * rounding to fp16: absmax / 7, or 1 for an all-zero group. */
GM_INLINE float gm_int4_scale_of(float amax) { return amax > 0.0f ? amax / 7.0f : 1.0f; }

/*
 * The int4 code of weight w in a group of fp16 scale sc: w / sc rounded to
 * nearest even, clamped to [-8, 7], as src/lib/precision.c's
 * gm_int4_quantize stores it. Exact whatever the division's accuracy
 * (OpenCL allows 2.5 ulp): the rounded quotient is corrected by the
 * remainder w - q * sc, exact in fp32 for the weights quantised here (8
 * significant bits, the scale 11, the code 4).
 */
GM_INLINE int gm_int4_code(float w, float sc)
{
    float q = gm_rint(w / sc), d = w - q * sc, mid = 0.5f * sc;
    const int odd = ((int)q & 1) != 0;
    if (d > mid || (d == mid && odd))
        q += 1.0f;
    else if (d < -mid || (d == -mid && odd))
        q -= 1.0f;
    return (int)gm_clampf(q, -8.0f, 7.0f);
}

/*
 * Per-role storage: gm_w_t and GM_WLOAD(p, i, kk, j, scale) for weights
 * (element i = row kk, column j of a [k, n] matrix; int4 reads `wscale`,
 * `wgroup`, `n` and `w_off` from the kernel's parameters), gm_kv_t with
 * GM_KVLOAD/GM_KVSTORE for the KV cache. Without a role token they are the
 * storage above.
 *
 * int4 matrices stored back to back (a layer stack, a model's weights):
 * the matrix at byte w_off of the packed buffer has its scales at element
 * 2 * w_off / wgroup of wscale, where every matrix before it has an input
 * dimension that is a multiple of wgroup (its k * n / 2 bytes then carry
 * k / wgroup * n scales); one matrix alone has w_off 0.
 */
#if defined(GM_WINT4)
typedef gm_u8 gm_w_t;
#define GM_WLOAD(p, i, kk, j, scale)                                                                   \
    gm_int4_load((p), wscale, (i), (size_t)(2u * w_off / wgroup) + (size_t)((kk) / wgroup) * n + (j))
#elif defined(GM_WFP8E4M3)
typedef gm_u8 gm_w_t;
#define GM_WLOAD(p, i, kk, j, scale) gm_fp8e4m3_to_float((p)[i])
#elif defined(GM_WFP8E5M2)
typedef gm_u8 gm_w_t;
#define GM_WLOAD(p, i, kk, j, scale) gm_fp8e5m2_to_float((p)[i])
#elif defined(GM_WBF16)
typedef gm_u16 gm_w_t;
#define GM_WLOAD(p, i, kk, j, scale) gm_bf16_to_float((p)[i])
#elif defined(GM_WFP16)
typedef gm_u16 gm_w_t;
#define GM_WLOAD(p, i, kk, j, scale) gm_half_load((p), (i))
#elif defined(GM_WFP32)
typedef float gm_w_t;
#define GM_WLOAD(p, i, kk, j, scale) ((p)[i])
#elif defined(GM_WINT8)
typedef gm_i8 gm_w_t;
#define GM_WLOAD(p, i, kk, j, scale) ((float)(p)[i] * (scale))
#else
typedef gm_t gm_w_t;
#define GM_WLOAD(p, i, kk, j, scale) GM_LOAD(p, i, scale)
#endif
#if defined(GM_KVFP8E4M3)
typedef gm_u8 gm_kv_t;
#define GM_KVLOAD(p, i, scale) gm_fp8e4m3_to_float((p)[i])
#define GM_KVSTORE(p, i, v, scale) ((p)[i] = gm_float_to_fp8e4m3(v))
#elif defined(GM_KVFP8E5M2)
typedef gm_u8 gm_kv_t;
#define GM_KVLOAD(p, i, scale) gm_fp8e5m2_to_float((p)[i])
#define GM_KVSTORE(p, i, v, scale) ((p)[i] = gm_float_to_fp8e5m2(v))
#elif defined(GM_KVFP16)
typedef gm_u16 gm_kv_t;
#define GM_KVLOAD(p, i, scale) gm_half_load((p), (i))
#define GM_KVSTORE(p, i, v, scale) gm_half_store((p), (i), (v))
#elif defined(GM_KVBF16)
typedef gm_u16 gm_kv_t;
#define GM_KVLOAD(p, i, scale) gm_bf16_to_float((p)[i])
#define GM_KVSTORE(p, i, v, scale) ((p)[i] = gm_float_to_bf16(v))
#elif defined(GM_KVFP32)
typedef float gm_kv_t;
#define GM_KVLOAD(p, i, scale) ((p)[i])
#define GM_KVSTORE(p, i, v, scale) ((p)[i] = (v))
#else
typedef gm_t gm_kv_t;
#define GM_KVLOAD(p, i, scale) GM_LOAD(p, i, scale)
#define GM_KVSTORE(p, i, v, scale) GM_STORE(p, i, v, scale)
#endif

/*
 * GM_FOR_EACH(i, n): visits every index in [0, n) exactly once across the
 * launch. GRID walks with a stride of the launch size (adjacent work items
 * touch adjacent elements); CHUNKED gives each work item one contiguous
 * slice (each core streams its own range).
 *
 * GM_SUM(total, i, n, term): total = the sum of `term` (an expression in
 * i) over this work item's indices. CHUNKED keeps GM_LANES independent
 * partial sums so that the compiler can vectorise the loop.
 */
#define GM_LANES 16
#if defined(GM_CHUNKED)
#define GM_CHUNK_BEGIN(n) (gm_global_id() * (((n) + gm_global_size() - 1) / gm_global_size()))
#define GM_CHUNK_END(n)                                                                   \
    ((GM_CHUNK_BEGIN(n) + ((n) + gm_global_size() - 1) / gm_global_size() < (n))         \
         ? GM_CHUNK_BEGIN(n) + ((n) + gm_global_size() - 1) / gm_global_size()            \
         : (n))
#define GM_FOR_EACH(i, n) for (size_t i = GM_CHUNK_BEGIN(n), gm_end_ = GM_CHUNK_END(n); i < gm_end_; i++)
/* Two halves of the slice are summed side by side: two independent
 * streams per core keep more loads in flight than one. */
#define GM_SUM(total, i, n, term)                                                         \
    do {                                                                                  \
        float gm_acc_[2 * GM_LANES];                                                      \
        for (int l_ = 0; l_ < 2 * GM_LANES; l_++)                                         \
            gm_acc_[l_] = 0.0f;                                                           \
        const size_t gm_begin_ = GM_CHUNK_BEGIN(n), gm_end_ = GM_CHUNK_END(n);            \
        const size_t gm_half_ = gm_end_ > gm_begin_ ? (gm_end_ - gm_begin_) / 2 / GM_LANES * GM_LANES : 0; \
        for (size_t gm_k_ = 0; gm_k_ < gm_half_; gm_k_ += GM_LANES) {                     \
            for (int l_ = 0; l_ < GM_LANES; l_++) {                                       \
                size_t i = gm_begin_ + gm_k_ + (size_t)l_;                                \
                gm_acc_[l_] += (term);                                                    \
            }                                                                             \
            for (int l_ = 0; l_ < GM_LANES; l_++) {                                       \
                size_t i = gm_begin_ + gm_half_ + gm_k_ + (size_t)l_;                     \
                gm_acc_[GM_LANES + l_] += (term);                                         \
            }                                                                             \
        }                                                                                 \
        for (size_t i = gm_begin_ + 2 * gm_half_; i < gm_end_; i++)                       \
            gm_acc_[0] += (term);                                                         \
        total = 0.0f;                                                                     \
        for (int l_ = 0; l_ < 2 * GM_LANES; l_++)                                         \
            total += gm_acc_[l_];                                                         \
    } while (0)
#else
#define GM_FOR_EACH(i, n) for (size_t i = gm_global_id(); i < (n); i += gm_global_size())
#define GM_SUM(total, i, n, term)                                                         \
    do {                                                                                  \
        total = 0.0f;                                                                     \
        GM_FOR_EACH(i, n) total += (term);                                                \
    } while (0)
#endif

/*
 * A device check's verdict (stream_verify, attention_verify, kv_verify):
 * gm_verdict_write reduces each work item's count of wrong elements and
 * the least index of one (the caller's "none" value where it found none)
 * over its work group in the local arrays count_of and first_of (one
 * entry a work item: GM_VERDICT_WG_MAX where the caller launches groups
 * of at most that), and work item 0 writes result[2 g] = the group's
 * count and result[2 g + 1] = its least index. No atomics. Every work
 * item of the group must call it; the work-group size must be a power of
 * two. The host sums the groups (bench/stream/stream.c,
 * bench/workloads/device_check.c). Device compilers only: a host compiler
 * that includes this header for its conversions
 * (tests/cuda/stream_cvt_agree.cpp) has no work groups.
 */
#define GM_VERDICT_WG_MAX 256
#if defined(__CUDACC__) || defined(GM_OPENCL)
GM_INLINE void gm_verdict_write(GM_LOCAL gm_u64 *count_of, GM_LOCAL gm_u64 *first_of, gm_u64 wrong, gm_u64 first,
                                GM_GLOBAL gm_u64 *result)
{
    const size_t lid = gm_local_id();
    count_of[lid] = wrong;
    first_of[lid] = first;
    gm_barrier();
    for (size_t half_n = gm_local_size() / 2; half_n > 0; half_n /= 2) {
        if (lid < half_n) {
            count_of[lid] += count_of[lid + half_n];
            first_of[lid] = first_of[lid + half_n] < first_of[lid] ? first_of[lid + half_n] : first_of[lid];
        }
        gm_barrier();
    }
    if (lid == 0) {
        result[2 * gm_group_id()] = count_of[0];
        result[2 * gm_group_id() + 1] = first_of[0];
    }
}
#endif

/*
 * The last step of attention_verify and kv_verify (kernels/attention.cl,
 * kernels/kvcache.cl): one query row's `dim` outputs, read by `got(d)`,
 * against the fp32 reference acc[d] / l of a two-pass softmax over `keys`
 * keys. A value passes within the output format's rounding (out_rel |want|
 * + out_abs) plus the arithmetic's slack 2^-23 vmax ((4 dim + 12) a + 4 keys
 * + 34), a the largest |q|.|k| / sqrt(dim) and vmax the largest |v| the row
 * read (the derivation: docs/workloads.md). Counts the wrong ones into
 * *wrong and keeps the least index (row_base + d) of one in *first.
 */
#define GM_ATTN_VERIFY_ROW(acc, l, dim, keys, a, vmax, got, out_rel, out_abs, row_base, wrong, first) \
    do {                                                                                              \
        const float slack_ = (1.0f / 8388608.0f) * (vmax) *                                           \
                             ((4.0f * (float)(dim) + 12.0f) * (a) + 4.0f * (float)(keys) + 34.0f);     \
        for (unsigned int d_ = 0; d_ < (dim); d_++) {                                                 \
            const float want_ = (acc)[d_] / (l), got_ = got(d_);                                      \
            if (!(fabs(got_ - want_) <= (out_rel) * fabs(want_) + (out_abs) + slack_) && (wrong)++ == 0) \
                (first) = (row_base) + d_;                                                            \
        }                                                                                             \
    } while (0)

#endif /* GM_PORTABLE_H */
