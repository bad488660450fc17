/*
 * Stream kernels: bandwidth of the simplest access patterns, in every
 * storage precision (see gm_portable.h). Inputs a and b are never written,
 * so every repetition of a kernel produces the same output and can be
 * verified against one CPU reference.
 *
 *   read   partials[g] = sum of a over work group g      bytes: n
 *   write  c[i] = gm_stream_write_value(i)               bytes: n
 *   copy   c = a                                          bytes: 2n
 *   scale  c = s * a                                      bytes: 2n
 *   add    c = a + b                                      bytes: 3n
 *   triad  c = a + s * b                                  bytes: 3n
 *   dot    partials[g] = sum of a * b over work group g   bytes: 2n
 *
 * Every precision moves 16 bytes per access: the arrays are walked as
 * vectors of GM_VW elements (fp32 4, fp16 and bf16 8, int8 and fp8 16),
 * each loaded or stored as one 16-byte access and converted to and from
 * fp32 in registers. The vectors are visited in the access pattern of the
 * variant (GM_FOR_EACH over vector indices: grid-stride or one contiguous
 * slice per work item); the n % GM_VW elements past the last whole vector
 * (the tail) are handled one by one, grid-stride, by the first work items.
 * The kernels that write c take `streaming`: set (by the host, where the
 * arrays do not fit in the last-level cache), their vector stores go past
 * the caches where the device can (GM_FOR_EACH_STORE).
 *
 * Raw units: the vectors convert to the floats that are cheapest to reach,
 * GM_RAW_SCALE(scale) times smaller than the values: int8's integers (the
 * unit is the tensor's scale), fp8e4m3's half units (2^8: gm_portable.h)
 * where it converts in software, the values themselves in every other
 * precision and in fp8e4m3 where it converts in hardware (CUDA on sm_89
 * and later: GM_FP8_HW, gm_fp8x4_decode / _encode). Read and dot multiply
 * their sums by the unit once; scale, add and triad are linear, so they
 * compute in raw units and store the raw result (gm_vstore_raw). For the
 * floats the unit is a power of two and every output element is exactly
 * the value the scalar definition above gives (conversions round as
 * gm_portable.h's scalar ones do), but for triad, whose a + s * b the
 * compilers may fuse into one multiply-add (one rounding, not two: the
 * verification's tolerance allows it); int8 stores rint(f(qa, qb)) for the
 * definition's rint(f(qa * scale, qb * scale) / scale), the same integers
 * when scale is a power of two (as the stream suite's is), otherwise
 * within one rounding before the rounding to an integer (on OpenCL it
 * computes in integer lanes: GM_FOR_EACH_STORE_S).
 *
 * Buffers must be 16-byte aligned (every backend's allocations are).
 * Reductions write one partial per work group; they assume a work-group
 * size that is a power of two <= GM_WG_MAX. The host adds the partials
 * (there are few: see the launch geometry in bench/stream/stream.c).
 */
#define GM_WG_MAX 1024

#if defined(GM_FP32)
#define GM_VW 4
#elif defined(GM_FP16) || defined(GM_BF16)
#define GM_VW 8
#else
#define GM_VW 16
#endif

/* fp8: the format's parameters for gm_portable.h's half-unit conversions;
 * GM_FP8_HW (either format) where the vectors convert in hardware instead
 * (GM_FP8_CVT). */
#if defined(GM_FP8E4M3)
#define GM_FP8_E4M3 1
#define GM_FP8_M 3u
#define GM_FP8_TOP 0x7eu
#elif defined(GM_FP8E5M2)
#define GM_FP8_E4M3 0
#define GM_FP8_M 2u
#define GM_FP8_TOP 0x7cu
#endif
#if (defined(GM_FP8E4M3) || defined(GM_FP8E5M2)) && defined(GM_FP8_CVT)
#define GM_FP8_HW 1
#endif

#if defined(GM_INT8)
#define GM_RAW_SCALE(scale) (scale)
#elif defined(GM_FP8E4M3) && !defined(GM_FP8_HW)
#define GM_RAW_SCALE(scale) GM_FP8_HALF_UNIT_E4M3
#else
#define GM_RAW_SCALE(scale) 1.0f
#endif

GM_INLINE float gm_stream_write_value(size_t i)
{
    return (float)((int)(i & 255u) - 128) * (1.0f / 128.0f);
}

/*
 * gm_vf: GM_VW floats with elementwise +, * and += (scalar * vector too).
 * gm_vrawf(p, j): vector j of storage array p (elements j * GM_VW ...) in
 * raw units. gm_vpack_raw(v): the 16 bytes that store the raw values v,
 * rounded as GM_STORE rounds (int8: to an integer, clamped to +-127), as
 * a uint4; gm_vstore_raw(p, j, v, store) stores them as vector j
 * with `store` (gm_store16 or gm_store16_nt).
 * gm_hsum(v): the sum of the lanes. gm_write_vec(j): the write kernel's
 * values for vector j.
 */
#if defined(GM_OPENCL)

/* gm_store16(p, j, v): stores the 16 bytes v as vector j of p.
 * gm_store16_nt: the same past the caches where the compiler can (a
 * non-temporal store: the line is not read before it is written, and the
 * caches keep what they hold). Kernels choose one with GM_FOR_EACH_STORE.
 * On x86-64 the value is first pinned in a vector register (an empty asm
 * statement, no instruction): where the CPU has AVX-512 (PoCL compiles
 * for it), LLVM would otherwise fold the narrowing that makes v (bf16's
 * 32 to 16 bits, fp8's 16 to 8) into the store, a vpmovdw or vpmovwb to
 * memory, which has no non-temporal form: the store would go through
 * the caches, reading each line first (bf16's and fp8's scale would move
 * half as many bytes again as it counts, add and triad a third).
 * tests/30-stream-stores-pocl.t checks the compiled kernels. */
GM_INLINE void gm_store16(GM_GLOBAL uint4 *p, size_t j, uint4 v) { p[j] = v; }
#if defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define GM_NT_STORE 1
#endif
#endif
GM_INLINE void gm_store16_nt(GM_GLOBAL uint4 *p, size_t j, uint4 v)
{
#if defined(GM_NT_STORE)
#if defined(__x86_64__) && defined(__clang__)
    __asm__("" : "+x"(v));
#endif
    __builtin_nontemporal_store(v, &p[j]);
#else
    p[j] = v;
#endif
}

/* The sums of the lanes of 4 and of 8 floats, added in pairs: every
 * precision's gm_hsum, and int8 dot's fold. */
GM_INLINE float gm_hsum4(float4 h) { return (h.s0 + h.s1) + (h.s2 + h.s3); }
GM_INLINE float gm_hsum8(float8 v) { return gm_hsum4(v.lo + v.hi); }

#if defined(GM_FP32)
typedef float4 gm_vf;
typedef int4 gm_vi;
#define GM_IOTA ((gm_vi)(0, 1, 2, 3))
#define gm_convert_vf convert_float4
GM_INLINE gm_vf gm_vrawf(GM_GLOBAL const gm_t *p, size_t j) { return ((GM_GLOBAL const float4 *)p)[j]; }
GM_INLINE uint4 gm_vpack_raw(gm_vf v) { return as_uint4(v); }
GM_INLINE float gm_hsum(gm_vf v) { return gm_hsum4(v); }

#elif defined(GM_FP16)
typedef float8 gm_vf;
typedef int8 gm_vi;
#define GM_IOTA ((gm_vi)(0, 1, 2, 3, 4, 5, 6, 7))
#define gm_convert_vf convert_float8
/* vload_half8 / vstore_half8_rte: one 16-byte access, converted in
 * registers (F16C instructions where the CPU has them); rounding to
 * nearest even as gm_half_store. */
GM_INLINE gm_vf gm_vrawf(GM_GLOBAL const gm_t *p, size_t j) { return vload_half8(j, (GM_GLOBAL const half *)p); }
GM_INLINE uint4 gm_vpack_raw(gm_vf v)
{
    ushort8 bits;
    vstore_half8_rte(v, 0, (__private half *)&bits);
    return as_uint4(bits);
}
GM_INLINE float gm_hsum(gm_vf v) { return gm_hsum8(v); }

#elif defined(GM_BF16)
typedef float8 gm_vf;
typedef int8 gm_vi;
#define GM_IOTA ((gm_vi)(0, 1, 2, 3, 4, 5, 6, 7))
#define gm_convert_vf convert_float8
GM_INLINE gm_vf gm_vrawf(GM_GLOBAL const gm_t *p, size_t j)
{
    return as_float8(convert_uint8(((GM_GLOBAL const ushort8 *)p)[j]) << 16);
}
/* Round to nearest even; NaN stays a (quiet) NaN: gm_float_to_bf16. */
GM_INLINE uint4 gm_vpack_raw(gm_vf v)
{
    uint8 u = as_uint8(v);
    uint8 r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    r = select(r, (u >> 16) | 0x40u, as_uint8(v != v));   /* NaN */
    return as_uint4(convert_ushort8(r));
}
GM_INLINE float gm_hsum(gm_vf v) { return gm_hsum8(v); }

#else /* one byte an element: int8, fp8e4m3, fp8e5m2 */
typedef float16 gm_vf;
typedef int16 gm_vi;
#define GM_IOTA ((gm_vi)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#define gm_convert_vf convert_float16
#if defined(GM_INT8)
GM_INLINE gm_vf gm_vrawf(GM_GLOBAL const gm_t *p, size_t j)
{
    return convert_float16(((GM_GLOBAL const char16 *)p)[j]);
}
/* Quantise: clamp(rint(v), -127, 127) as GM_STORE. fmax clamps below
 * (NaN to -127, as GM_STORE's fmax gives; rint commutes with a clamp to
 * integers); adding 1.5 * 2^23 rounds to nearest even, leaving the
 * integer in the low bits of the sum; the saturating narrowing clamps
 * above (a larger sum, infinity included, only grows the bits). */
GM_INLINE uint4 gm_vpack_raw(gm_vf v)
{
    int16 q = as_int16(fmax(v, -127.0f) + 0x1.8p23f) - 0x4b400000;
    return as_uint4(convert_char16_sat(q));
}
#else
GM_INLINE gm_vf gm_vrawf(GM_GLOBAL const gm_t *p, size_t j)
{
    return gm_fp8x16_half_decode(((GM_GLOBAL const uchar16 *)p)[j], GM_FP8_E4M3);
}
GM_INLINE uint4 gm_vpack_raw(gm_vf v) { return as_uint4(gm_fp8x16_half_encode(v, GM_FP8_M, GM_FP8_TOP)); }
#endif
GM_INLINE float gm_hsum(gm_vf v) { return gm_hsum8(v.lo + v.hi); }
#endif

GM_INLINE gm_vf gm_vzero(void) { return (gm_vf)(0.0f); }
/* Lane l holds write_value(j * GM_VW + l): GM_VW divides 256, so the low
 * byte of that index is (j * GM_VW) & 255 plus l. */
GM_INLINE gm_vf gm_write_vec(size_t j)
{
    gm_vi k = (gm_vi)((int)((j * GM_VW) & 255u) - 128) + GM_IOTA;
    return gm_convert_vf(k) * (1.0f / 128.0f);
}

#else /* GM_CUDA */

/* Plain stores both: a GPU writes whole lines without reading them first. */
GM_INLINE void gm_store16(uint4 *p, size_t j, uint4 v) { p[j] = v; }
GM_INLINE void gm_store16_nt(uint4 *p, size_t j, uint4 v) { p[j] = v; }

struct gm_vf {
    float v[GM_VW];
};
GM_INLINE gm_vf operator+(gm_vf a, gm_vf b)
{
#pragma unroll
    for (int l = 0; l < GM_VW; l++)
        a.v[l] += b.v[l];
    return a;
}
GM_INLINE gm_vf operator*(float s, gm_vf a)
{
#pragma unroll
    for (int l = 0; l < GM_VW; l++)
        a.v[l] = s * a.v[l];
    return a;
}
#if !defined(GM_INT8)   /* read and dot's float sums (int8 adds integers: dp4a) */
GM_INLINE gm_vf gm_vzero(void)
{
    gm_vf r;
#pragma unroll
    for (int l = 0; l < GM_VW; l++)
        r.v[l] = 0.0f;
    return r;
}
GM_INLINE gm_vf operator*(gm_vf a, gm_vf b)
{
#pragma unroll
    for (int l = 0; l < GM_VW; l++)
        a.v[l] *= b.v[l];
    return a;
}
GM_INLINE gm_vf &operator+=(gm_vf &a, gm_vf b)
{
    a = a + b;
    return a;
}
GM_INLINE float gm_hsum(gm_vf a)
{
    float s = 0.0f;
#pragma unroll
    for (int l = 0; l < GM_VW; l++)
        s += a.v[l];
    return s;
}
#endif
/* gm_stream_write_value's, through gm_byte_ramp (no conversion). */
GM_INLINE gm_vf gm_write_vec(size_t j)
{
    gm_vf r;
#pragma unroll
    for (int l = 0; l < GM_VW; l++)
        r.v[l] = gm_byte_ramp((gm_u32)(j * GM_VW) + (gm_u32)l);
    return r;
}

/* Elements per 32-bit word, and one word's conversions to and from raw
 * units (little-endian: the lowest-addressed element is the word's low
 * bits). */
#define GM_PER_WORD (GM_VW / 4)
GM_INLINE void gm_unpack_word(gm_u32 w, float *out)
{
#if defined(GM_FP32)
    out[0] = gm_u32_as_float(w);
#elif defined(GM_FP16)
    out[0] = __half2float(__ushort_as_half((unsigned short)(w & 0xffffu)));
    out[1] = __half2float(__ushort_as_half((unsigned short)(w >> 16)));
#elif defined(GM_BF16)
    out[0] = gm_u32_as_float(w << 16);
    out[1] = gm_u32_as_float(w & 0xffff0000u);
#elif defined(GM_INT8)
    gm_i8x4_decode(w, out);
#elif defined(GM_FP8_HW)
    gm_fp8x4_decode(w, GM_FP8_E4M3, out);
#else
#pragma unroll
    for (int b = 0; b < 4; b++)
        out[b] = gm_fp8_half_decode(w >> (8 * b), GM_FP8_E4M3);
#endif
}
GM_INLINE gm_u32 gm_pack_word(const float *in)
{
#if defined(GM_FP32)
    return gm_float_as_u32(in[0]);
#elif defined(GM_FP16)
    return gm_f16x2_encode(in[0], in[1]);
#elif defined(GM_BF16)
    return gm_bf16x2_encode(in[0], in[1]);
#elif defined(GM_INT8)
    return gm_i8x4_encode(in);
#elif defined(GM_FP8_HW)
    return gm_fp8x4_encode(in, GM_FP8_E4M3);
#else
    gm_u32 w = 0;
#pragma unroll
    for (int b = 0; b < 4; b++)
        w |= (gm_fp8_half_encode(in[b], GM_FP8_M, GM_FP8_TOP) & 0xffu) << (8 * b);
    return w;
#endif
}
GM_INLINE gm_vf gm_vrawf(const gm_t *p, size_t j)
{
    uint4 q = ((const uint4 *)p)[j];
    gm_vf r;
    gm_unpack_word(q.x, &r.v[0 * GM_PER_WORD]);
    gm_unpack_word(q.y, &r.v[1 * GM_PER_WORD]);
    gm_unpack_word(q.z, &r.v[2 * GM_PER_WORD]);
    gm_unpack_word(q.w, &r.v[3 * GM_PER_WORD]);
    return r;
}
GM_INLINE uint4 gm_vpack_raw(gm_vf v)
{
    uint4 q;
    q.x = gm_pack_word(&v.v[0 * GM_PER_WORD]);
    q.y = gm_pack_word(&v.v[1 * GM_PER_WORD]);
    q.z = gm_pack_word(&v.v[2 * GM_PER_WORD]);
    q.w = gm_pack_word(&v.v[3 * GM_PER_WORD]);
    return q;
}
#endif

#define gm_vstore_raw(p, j, v, store) store((GM_GLOBAL uint4 *)(p), (j), gm_vpack_raw(v))

/* gm_vpack(v, scale): the 16 bytes that store the values v (not raw):
 * int8 quantises v * (1 / scale), the same integers as v / scale for a
 * power-of-two scale. */
GM_INLINE uint4 gm_vpack(gm_vf v, float scale) { return gm_vpack_raw((1.0f / GM_RAW_SCALE(scale)) * v); }

/* GM_FOR_EACH_STORE(j, n, streaming, BODY): GM_FOR_EACH(j, n) BODY(j, store),
 * with `store` gm_store16_nt where `streaming` (a kernel argument the host
 * sets where the arrays do not fit in the last-level cache anyway:
 * bench/stream/stream.c), else gm_store16. Two loops: a store that may or may not
 * be non-temporal would be compiled as a plain one. */
#define GM_FOR_EACH_STORE(j, n, streaming, BODY) \
    do {                                        \
        if (streaming) {                        \
            GM_FOR_EACH(j, n) BODY(j, gm_store16_nt); \
        } else {                                \
            GM_FOR_EACH(j, n) BODY(j, gm_store16); \
        }                                       \
    } while (0)

/* GM_TAIL(i, n): this work item's share of the elements past the last
 * whole vector, one by one. */
#define GM_TAIL(i, n) \
    for (size_t i = (n) / GM_VW * GM_VW + gm_global_id(); i < (n); i += gm_global_size())

/*
 * Accumulation for read (K = read) and dot (K = dot): gm_K_term(...) is
 * vector j's contribution, a gm_K_acc (read: vector j of a in raw units;
 * dot: its products with vector j of b); GM_K_BLOCK of them are
 * added into one accumulator before gm_K_sum folds its lanes into a
 * float. int8 on OpenCL adds the stored integers exactly in integer
 * lanes: read in 16-bit lanes (a block of 256 vectors adds at most 256
 * values of magnitude <= 128 to a lane: within 2^15), dot in 32-bit lanes
 * that each take two products a vector (gm_i8x16_dot_pairs; a block of
 * 2^15 vectors: at most 2^16 products of magnitude <= 2^14 to a lane,
 * 2^30). int8 on CUDA does the same with dp4a (four byte
 * products added to an int32, one instruction a word: an int8 kernel
 * that converts every element spends an instruction or two on each byte
 * it reads) into one int32: read sums a vector's 16 values (multiplied
 * by 1 in each byte: at most 2^11), 2^16 vectors to a block (2^27), and
 * dot its 16 products (at most 2^18), 2^12 vectors to a block (2^30).
 * Otherwise the floats of gm_vrawf.
 */
#if defined(GM_OPENCL) && defined(GM_INT8)
typedef short16 gm_read_acc;
#define GM_READ_BLOCK ((size_t)256)
GM_INLINE gm_read_acc gm_read_term(GM_GLOBAL const gm_t *a, size_t j)
{
    return convert_short16(((GM_GLOBAL const char16 *)a)[j]);
}
GM_INLINE gm_read_acc gm_read_zero(void) { return (gm_read_acc)(0); }
GM_INLINE float gm_read_sum(gm_read_acc s) { return gm_hsum(convert_float16(s)); }
typedef int8 gm_dot_acc;
#define GM_DOT_BLOCK ((size_t)32768)
GM_INLINE gm_dot_acc gm_dot_term(GM_GLOBAL const gm_t *a, GM_GLOBAL const gm_t *b, size_t j)
{
    return gm_i8x16_dot_pairs(((GM_GLOBAL const char16 *)a)[j], ((GM_GLOBAL const char16 *)b)[j]);
}
GM_INLINE gm_dot_acc gm_dot_zero(void) { return (gm_dot_acc)(0); }
GM_INLINE float gm_dot_sum(gm_dot_acc s) { return gm_hsum8(convert_float8(s)); }
#elif defined(GM_CUDA) && defined(GM_INT8)
#define GM_BYTE_ONES 0x01010101
typedef int gm_read_acc;
#define GM_READ_BLOCK ((size_t)65536)
GM_INLINE gm_read_acc gm_read_term(const gm_t *a, size_t j)
{
    const int4 q = ((const int4 *)a)[j];
    return __dp4a(q.w, GM_BYTE_ONES,
                  __dp4a(q.z, GM_BYTE_ONES, __dp4a(q.y, GM_BYTE_ONES, __dp4a(q.x, GM_BYTE_ONES, 0))));
}
GM_INLINE gm_read_acc gm_read_zero(void) { return 0; }
GM_INLINE float gm_read_sum(gm_read_acc s) { return (float)s; }
typedef int gm_dot_acc;
#define GM_DOT_BLOCK ((size_t)4096)
GM_INLINE gm_dot_acc gm_dot_term(const gm_t *a, const gm_t *b, size_t j)
{
    const int4 p = ((const int4 *)a)[j], q = ((const int4 *)b)[j];
    return __dp4a(p.w, q.w, __dp4a(p.z, q.z, __dp4a(p.y, q.y, __dp4a(p.x, q.x, 0))));
}
GM_INLINE gm_dot_acc gm_dot_zero(void) { return 0; }
GM_INLINE float gm_dot_sum(gm_dot_acc s) { return (float)s; }
#else
typedef gm_vf gm_read_acc;
typedef gm_vf gm_dot_acc;
#define GM_READ_BLOCK ((size_t)65536)
#define GM_DOT_BLOCK ((size_t)65536)
#define gm_read_term(a, j) gm_vrawf((a), (j))
#define gm_dot_term(a, b, j) (gm_vrawf((a), (j)) * gm_vrawf((b), (j)))
#define gm_read_zero gm_vzero
#define gm_dot_zero gm_vzero
#define gm_read_sum gm_hsum
#define gm_dot_sum gm_hsum
#endif

/*
 * GM_VSUM(total, j, nv, term, acc_t, zero, fold, block, parts): total (a
 * float) += the sum of the lanes of `term` (an acc_t expression in the
 * vector index j) over this work item's vectors, `block` terms to an acc_t
 * (from zero()) at a time, each folded into total by fold(). CHUNKED cuts
 * its slice into `parts` (2 or 4) equal parts summed side by side, the
 * few vectors past them one by one: independent streams keep more loads
 * in flight than one. Read streams its one array in 4 parts, dot its two
 * in 2 each: four streams a core either way (side by side, 4 parts made
 * read faster than 2, and dot slower). GM_READ_SUM / GM_DOT_SUM pass the
 * accumulation of read and dot.
 */
#if defined(GM_CHUNKED)
#define GM_VSUM(total, j, nv, term, acc_t, zero, fold, block, parts)                     \
    do {                                                                                  \
        const size_t gm_per_ = ((nv) + gm_global_size() - 1) / gm_global_size();          \
        const size_t gm_b_ = gm_global_id() * gm_per_ < (nv) ? gm_global_id() * gm_per_ : (nv); \
        const size_t gm_e_ = gm_b_ + gm_per_ < (nv) ? gm_b_ + gm_per_ : (nv);             \
        const size_t gm_h_ = (gm_e_ - gm_b_) / (parts);                                   \
        for (size_t gm_o_ = 0; gm_o_ < gm_h_; gm_o_ += (block)) {                         \
            const size_t gm_stop_ = gm_h_ - gm_o_ > (block) ? gm_o_ + (block) : gm_h_;    \
            acc_t gm_a1_ = zero(), gm_a2_ = zero(), gm_a3_ = zero(), gm_a4_ = zero();     \
            for (size_t gm_k_ = gm_o_; gm_k_ < gm_stop_; gm_k_++) {                       \
                {                                                                         \
                    const size_t j = gm_b_ + gm_k_;                                       \
                    gm_a1_ += (term);                                                     \
                }                                                                         \
                {                                                                         \
                    const size_t j = gm_b_ + gm_h_ + gm_k_;                               \
                    gm_a2_ += (term);                                                     \
                }                                                                         \
                if ((parts) == 4) {                                                       \
                    {                                                                     \
                        const size_t j = gm_b_ + 2 * gm_h_ + gm_k_;                       \
                        gm_a3_ += (term);                                                 \
                    }                                                                     \
                    {                                                                     \
                        const size_t j = gm_b_ + 3 * gm_h_ + gm_k_;                       \
                        gm_a4_ += (term);                                                 \
                    }                                                                     \
                }                                                                         \
            }                                                                             \
            total += (fold(gm_a1_) + fold(gm_a2_)) + (fold(gm_a3_) + fold(gm_a4_));       \
        }                                                                                 \
        for (size_t j = gm_b_ + (parts) * gm_h_; j < gm_e_; j++)                          \
            total += fold(term);                                                          \
    } while (0)
#else
#define GM_VSUM(total, j, nv, term, acc_t, zero, fold, block, parts)                     \
    do {                                                                                  \
        const size_t gm_step_ = gm_global_size() * (block);                               \
        for (size_t gm_s_ = gm_global_id(); gm_s_ < (nv); gm_s_ += gm_step_) {            \
            const size_t gm_stop_ = (nv) - gm_s_ > gm_step_ ? gm_s_ + gm_step_ : (nv);    \
            acc_t gm_a_ = zero();                                                         \
            for (size_t j = gm_s_; j < gm_stop_; j += gm_global_size())                   \
                gm_a_ += (term);                                                          \
            total += fold(gm_a_);                                                         \
        }                                                                                 \
    } while (0)
#endif
#define GM_READ_SUM(total, j, nv, term) \
    GM_VSUM(total, j, nv, term, gm_read_acc, gm_read_zero, gm_read_sum, GM_READ_BLOCK, 4)
#define GM_DOT_SUM(total, j, nv, term) \
    GM_VSUM(total, j, nv, term, gm_dot_acc, gm_dot_zero, gm_dot_sum, GM_DOT_BLOCK, 2)

GM_INLINE float gm_group_sum(GM_LOCAL float *scratch, float v)
{
    size_t lid = gm_local_id();
    if (gm_local_size() == 1)   /* one item per group: nothing to combine */
        return v;
    scratch[lid] = v;
    gm_barrier();
    for (size_t half_n = gm_local_size() / 2; half_n > 0; half_n /= 2) {
        if (lid < half_n)
            scratch[lid] += scratch[lid + half_n];
        gm_barrier();
    }
    return scratch[0];
}

GM_KERNEL stream_read(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL float *GM_RESTRICT partials,
                      unsigned long n, float scale)
{
    GM_LOCAL_DECL float scratch[GM_WG_MAX];
    const size_t nv = (size_t)n / GM_VW;
    float sum = 0.0f;
    GM_READ_SUM(sum, j, nv, gm_read_term(a, j));
    sum *= GM_RAW_SCALE(scale);
    GM_TAIL(i, (size_t)n) sum += GM_LOAD(a, i, scale);
    float total = gm_group_sum(scratch, sum);
    if (gm_local_id() == 0)
        partials[gm_group_id()] = total;
}

/* The written values repeat every 256 elements (GM_PERIOD vectors): each
 * group converts one period into local memory once, and every vector
 * store copies its entry, so that the kernel's cost is its stores in
 * every precision. */
#define GM_PERIOD (256 / GM_VW)
GM_KERNEL stream_write(GM_GLOBAL gm_t *GM_RESTRICT c, unsigned long n, float scale, unsigned int streaming)
{
    GM_LOCAL_DECL uint4 period[GM_PERIOD];
    for (size_t t = gm_local_id(); t < GM_PERIOD; t += gm_local_size())
        period[t] = gm_vpack(gm_write_vec(t), scale);
    gm_barrier();
    const size_t nv = (size_t)n / GM_VW;
#if defined(GM_OPENCL)
    GM_GLOBAL uint4 *c4 = (GM_GLOBAL uint4 *)c;
#else
    uint4 *c4 = (uint4 *)c;
#endif
#define GM_WRITE_VEC(j, store) store(c4, j, period[(j) & (GM_PERIOD - 1)])
    GM_FOR_EACH_STORE(j, nv, streaming, GM_WRITE_VEC);
    GM_TAIL(i, (size_t)n) GM_STORE(c, i, gm_stream_write_value(i), scale);
}

/* A copy moves the bits: no conversion, so every precision is exact. */
GM_KERNEL stream_copy(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL gm_t *GM_RESTRICT c,
                      unsigned long n, unsigned int streaming)
{
    const size_t nv = (size_t)n / GM_VW;
#if defined(GM_OPENCL)
    GM_GLOBAL const uint4 *a4 = (GM_GLOBAL const uint4 *)a;
    GM_GLOBAL uint4 *c4 = (GM_GLOBAL uint4 *)c;
#else
    const uint4 *a4 = (const uint4 *)a;
    uint4 *c4 = (uint4 *)c;
#endif
#define GM_COPY_VEC(j, store) store(c4, j, a4[j])
    GM_FOR_EACH_STORE(j, nv, streaming, GM_COPY_VEC);
    GM_TAIL(i, (size_t)n) c[i] = a[i];
}

/*
 * int8 on OpenCL computes on the stored integers in 16-bit lanes, then
 * saturates to a byte and clamps to -127 below (GM_I8_STORE_SAT): add
 * adds them (exactly the rounded float sum: integers add exactly); scale
 * and triad multiply by s in Q15 fixed point where |s| < 1
 * (gm_i8x16_mul_q15: rint(s * q) for the stream suite's s, one off at most
 * for any other). GM_FOR_EACH_STORE_S(j, nv, streaming, s, BODY, I8_BODY)
 * is GM_FOR_EACH_STORE with I8_BODY there (which reads k, s in Q15), BODY
 * everywhere else.
 */
#if defined(GM_OPENCL) && defined(GM_INT8)
#define GM_I8_VEC(p, j) (((GM_GLOBAL const char16 *)(p))[j])
#define GM_I8_STORE_SAT(j, store, w) \
    store((GM_GLOBAL uint4 *)c, (j), as_uint4(max(convert_char16_sat(w), (char16)(-127))))
#define GM_FOR_EACH_STORE_S(j, nv, streaming, s, BODY, I8_BODY) \
    do {                                                     \
        if (gm_q15_fits(s)) {                                \
            const short k = gm_q15(s);                       \
            GM_FOR_EACH_STORE(j, nv, streaming, I8_BODY);    \
        } else {                                             \
            GM_FOR_EACH_STORE(j, nv, streaming, BODY);       \
        }                                                    \
    } while (0)
#else
#define GM_FOR_EACH_STORE_S(j, nv, streaming, s, BODY, I8_BODY) GM_FOR_EACH_STORE(j, nv, streaming, BODY)
#endif

GM_KERNEL stream_scale(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL gm_t *GM_RESTRICT c,
                       unsigned long n, float s, float scale, unsigned int streaming)
{
    const size_t nv = (size_t)n / GM_VW;
#define GM_SCALE_VEC(j, store) gm_vstore_raw(c, j, s * gm_vrawf(a, j), store)
#define GM_SCALE_I8_VEC(j, store) GM_I8_STORE_SAT(j, store, gm_i8x16_mul_q15(GM_I8_VEC(a, j), k))
    GM_FOR_EACH_STORE_S(j, nv, streaming, s, GM_SCALE_VEC, GM_SCALE_I8_VEC);
    GM_TAIL(i, (size_t)n) GM_STORE(c, i, s * GM_LOAD(a, i, scale), scale);
}

#if defined(GM_OPENCL) && defined(GM_INT8)
#define GM_ADD_VEC(j, store) \
    GM_I8_STORE_SAT(j, store, convert_short16(GM_I8_VEC(a, j)) + convert_short16(GM_I8_VEC(b, j)))
#else
#define GM_ADD_VEC(j, store) gm_vstore_raw(c, (j), gm_vrawf(a, (j)) + gm_vrawf(b, (j)), store)
#endif
GM_KERNEL stream_add(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL const gm_t *GM_RESTRICT b,
                     GM_GLOBAL gm_t *GM_RESTRICT c, unsigned long n, float scale, unsigned int streaming)
{
    const size_t nv = (size_t)n / GM_VW;
    GM_FOR_EACH_STORE(j, nv, streaming, GM_ADD_VEC);
    GM_TAIL(i, (size_t)n) GM_STORE(c, i, GM_LOAD(a, i, scale) + GM_LOAD(b, i, scale), scale);
}

GM_KERNEL stream_triad(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL const gm_t *GM_RESTRICT b,
                       GM_GLOBAL gm_t *GM_RESTRICT c, unsigned long n, float s, float scale, unsigned int streaming)
{
    const size_t nv = (size_t)n / GM_VW;
#define GM_TRIAD_VEC(j, store) gm_vstore_raw(c, j, gm_vrawf(a, j) + s * gm_vrawf(b, j), store)
#define GM_TRIAD_I8_VEC(j, store) \
    GM_I8_STORE_SAT(j, store, convert_short16(GM_I8_VEC(a, j)) + gm_i8x16_mul_q15(GM_I8_VEC(b, j), k))
    GM_FOR_EACH_STORE_S(j, nv, streaming, s, GM_TRIAD_VEC, GM_TRIAD_I8_VEC);
    GM_TAIL(i, (size_t)n) GM_STORE(c, i, GM_LOAD(a, i, scale) + s * GM_LOAD(b, i, scale), scale);
}

GM_KERNEL stream_dot(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL const gm_t *GM_RESTRICT b,
                     GM_GLOBAL float *GM_RESTRICT partials, unsigned long n, float scale)
{
    GM_LOCAL_DECL float scratch[GM_WG_MAX];
    const size_t nv = (size_t)n / GM_VW;
    float sum = 0.0f;
    GM_DOT_SUM(sum, j, nv, gm_dot_term(a, b, j));
    sum *= GM_RAW_SCALE(scale) * GM_RAW_SCALE(scale);
    GM_TAIL(i, (size_t)n) sum += GM_LOAD(a, i, scale) * GM_LOAD(b, i, scale);
    float total = gm_group_sum(scratch, sum);
    if (gm_local_id() == 0)
        partials[gm_group_id()] = total;
}

/*
 * stream_verify: the whole output of write, copy, scale, add or triad
 * (`stream_kernel`: its index in gm_stream_kernel_names, 1 to 5) checked
 * on the device, every element, outside the timed region. Each element's
 * expected value is recomputed from the inputs' seeded pattern as
 * bench/stream/check.c generates it: element i of a is entry
 * gm_stream_pattern_index(i, 0) of the table `values` (GM_PATTERN_TABLE
 * floats: the pattern's values as they read back in this precision), of b
 * entry gm_stream_pattern_index(i, 1) of values + GM_PATTERN_TABLE. The
 * expected float follows the scalar definitions at the top of this file in
 * fp32, is rounded to the storage format, and its bits must equal the
 * element's exactly; triad's a + s * b is accepted fused (one rounding) or
 * not (two), as the kernel may be compiled either way. Nothing else is
 * tolerated, so a flip of any bit of an element is seen (triad: unless it
 * turns one of its two accepted values into the other).
 *
 * One pass compares whole 16-byte vectors (the pattern gathered from the
 * tables, rounded by gm_vpack as the kernels round: no branch an element)
 * and counts the vectors that match neither accepted value; only a work
 * item that counted one walks its elements again, one by one, rounding as
 * GM_STORE does (gm_stream_bits), for the exact count and the first index
 * (a vector whose lanes mix fused and unfused triad values is no mismatch
 * there). Writes, per work group g, result[2 g] = the elements found wrong
 * among its work items' and result[2 g + 1] = the least index of one (n
 * where none). No atomics. Assumes a work-group size that is a power of
 * two <= GM_WG_MAX.
 */
#define GM_PATTERN_TABLE 4096u
#define GM_PATTERN_STEP ((gm_u64)0x9e3779b97f4a7c15ull)
#define GM_PATTERN_WHICH ((gm_u64)0xbf58476d1ce4e5b9ull)

/* check.c's pattern_index: which table entry element i of pattern `which`
 * holds. (x ^ (x >> 29)) >> 52 is the top 12 bits of x, as x >> 29 is
 * below 2^35: gm_stream_pattern_vec walks x by adding GM_PATTERN_STEP. */
GM_INLINE gm_u32 gm_stream_pattern_index(gm_u64 i, gm_u64 which)
{
    gm_u64 x = i * GM_PATTERN_STEP + which * GM_PATTERN_WHICH;
    return (gm_u32)((x ^ (x >> 29)) >> 52) & (GM_PATTERN_TABLE - 1u);
}

/* Vector j of pattern `which` (elements j * GM_VW + l), from its table.
 * OpenCL computes the lanes' indices as one vector (x of lane l is x of
 * lane 0 plus l steps) and gathers the lanes from the table. */
#if defined(GM_OPENCL)
#if GM_VW == 4
typedef ulong4 gm_vu64;
typedef uint4 gm_vu32;
#define GM_LANE_STEPS ((gm_vu64)(0, 1, 2, 3) * GM_PATTERN_STEP)
#define gm_convert_vu32 convert_uint4
#define GM_GATHER(t, x) ((gm_vf)((t)[(x).s0], (t)[(x).s1], (t)[(x).s2], (t)[(x).s3]))
#elif GM_VW == 8
typedef ulong8 gm_vu64;
typedef uint8 gm_vu32;
#define GM_LANE_STEPS ((gm_vu64)(0, 1, 2, 3, 4, 5, 6, 7) * GM_PATTERN_STEP)
#define gm_convert_vu32 convert_uint8
#define GM_GATHER(t, x) \
    ((gm_vf)((t)[(x).s0], (t)[(x).s1], (t)[(x).s2], (t)[(x).s3], (t)[(x).s4], (t)[(x).s5], (t)[(x).s6], (t)[(x).s7]))
#else
typedef ulong16 gm_vu64;
typedef uint16 gm_vu32;
#define GM_LANE_STEPS ((gm_vu64)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) * GM_PATTERN_STEP)
#define gm_convert_vu32 convert_uint16
#define GM_GATHER(t, x)                                                                                  \
    ((gm_vf)((t)[(x).s0], (t)[(x).s1], (t)[(x).s2], (t)[(x).s3], (t)[(x).s4], (t)[(x).s5], (t)[(x).s6], \
             (t)[(x).s7], (t)[(x).s8], (t)[(x).s9], (t)[(x).sa], (t)[(x).sb], (t)[(x).sc], (t)[(x).sd], \
             (t)[(x).se], (t)[(x).sf]))
#endif
GM_INLINE gm_vf gm_stream_pattern_vec(GM_GLOBAL const float *table, size_t j, gm_u64 which)
{
    const gm_vu64 x = (gm_vu64)((gm_u64)j * GM_VW * GM_PATTERN_STEP + which * GM_PATTERN_WHICH) + GM_LANE_STEPS;
    const gm_vu32 t = gm_convert_vu32(x >> 52);
    return GM_GATHER(table, t);
}
#else
GM_INLINE gm_vf gm_stream_pattern_vec(const float *table, size_t j, gm_u64 which)
{
    gm_u64 x = (gm_u64)j * GM_VW * GM_PATTERN_STEP + which * GM_PATTERN_WHICH;
    gm_vf r;
#pragma unroll
    for (int l = 0; l < GM_VW; l++, x += GM_PATTERN_STEP)
        r.v[l] = table[(gm_u32)(x >> 52)];
    return r;
}
#endif

/* a + s * b lane by lane, fused into one rounding, and not. */
GM_INLINE gm_vf gm_stream_vfma(gm_vf a, float s, gm_vf b)
{
#if defined(GM_OPENCL)
    return fma((gm_vf)(s), b, a);
#else
#pragma unroll
    for (int l = 0; l < GM_VW; l++)
        a.v[l] = fmaf(s, b.v[l], a.v[l]);
    return a;
#endif
}
GM_INLINE gm_vf gm_stream_vmuladd_unfused(gm_vf a, float s, gm_vf b)
{
#if defined(GM_OPENCL)
#pragma OPENCL FP_CONTRACT OFF
    gm_vf p = s * b;
    return a + p;
#else
#pragma unroll
    for (int l = 0; l < GM_VW; l++)
        a.v[l] = __fadd_rn(a.v[l], __fmul_rn(s, b.v[l]));
    return a;
#endif
}
GM_INLINE float gm_stream_muladd_unfused(float a, float s, float b)
{
#if defined(GM_OPENCL)
#pragma OPENCL FP_CONTRACT OFF
    float p = s * b;
    return a + p;
#else
    return __fadd_rn(a, __fmul_rn(s, b));
#endif
}

GM_INLINE int gm_u4_equal(uint4 a, uint4 b)
{
#if defined(GM_OPENCL)
    return all(a == b);
#else
    return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
#endif
}

/* Whether vector j of c (its 16 bytes `got`) matches neither value kernel
 * k may store there: 1 or 0. */
GM_INLINE gm_u32 gm_stream_vec_wrong(uint4 got, size_t j, int k, GM_GLOBAL const float *values, float s,
                                     float scale)
{
    if (k == 1)
        return !gm_u4_equal(got, gm_vpack(gm_write_vec(j), scale));
    const gm_vf va = gm_stream_pattern_vec(values, j, 0);
    if (k == 2)
        return !gm_u4_equal(got, gm_vpack(va, scale));
    if (k == 3)
        return !gm_u4_equal(got, gm_vpack(s * va, scale));
    const gm_vf vb = gm_stream_pattern_vec(values + GM_PATTERN_TABLE, j, 1);
    if (k == 4)
        return !gm_u4_equal(got, gm_vpack(va + vb, scale));
    return !gm_u4_equal(got, gm_vpack(gm_stream_vfma(va, s, vb), scale))
           && !gm_u4_equal(got, gm_vpack(gm_stream_vmuladd_unfused(va, s, vb), scale));
}

/* The bits GM_STORE stores for v, and the element type they are read as. */
#if defined(GM_FP32)
typedef gm_u32 gm_bits_t;
#elif defined(GM_FP16) || defined(GM_BF16)
typedef gm_u16 gm_bits_t;
#else
typedef gm_u8 gm_bits_t;
#endif
GM_INLINE gm_u32 gm_stream_bits(float v, float scale)
{
#if defined(GM_INT8)
    return (gm_u8)(gm_i8)gm_clampf(gm_rint(v / scale), -127.0f, 127.0f);
#else
    (void)scale;   /* int8's alone */
#if defined(GM_FP32)
    return gm_float_as_u32(v);
#elif defined(GM_FP16) && defined(GM_OPENCL)
    gm_u16 h;
    vstore_half_rte(v, 0, (__private half *)&h);
    return h;
#elif defined(GM_FP16)
    return __half_as_ushort(__float2half_rn(v));
#elif defined(GM_BF16)
    return gm_float_to_bf16(v);
#elif defined(GM_FP8E4M3)
    return gm_float_to_fp8e4m3(v);
#else
    return gm_float_to_fp8e5m2(v);
#endif
#endif
}

/* Whether element i of c (its bits `got`) differs from what kernel k
 * computes there, rounded as GM_STORE rounds: 1 or 0. */
GM_INLINE gm_u32 gm_stream_wrong(gm_u32 got, size_t i, int k, GM_GLOBAL const float *values, float s,
                                 float scale)
{
    const float va = values[gm_stream_pattern_index(i, 0)];
    const float vb = values[GM_PATTERN_TABLE + gm_stream_pattern_index(i, 1)];
    float want = va, other = va;   /* copy */
    if (k == 1)
        want = other = gm_stream_write_value(i);
    else if (k == 3)
        want = other = s * va;
    else if (k == 4)
        want = other = va + vb;
    else if (k == 5) {
#if defined(GM_OPENCL)
        want = fma(s, vb, va);
#else
        want = fmaf(s, vb, va);
#endif
        other = gm_stream_muladd_unfused(va, s, vb);
    }
    return got != gm_stream_bits(want, scale) && got != gm_stream_bits(other, scale);
}

GM_KERNEL stream_verify(GM_GLOBAL const gm_t *GM_RESTRICT c, GM_GLOBAL const float *GM_RESTRICT values,
                        GM_GLOBAL gm_u64 *GM_RESTRICT result, unsigned long n, int stream_kernel, float s,
                        float scale)
{
    GM_LOCAL_DECL gm_u64 count_of[GM_WG_MAX];
    GM_LOCAL_DECL gm_u64 first_of[GM_WG_MAX];
    GM_GLOBAL const gm_bits_t *bits = (GM_GLOBAL const gm_bits_t *)c;
    GM_GLOBAL const uint4 *c4 = (GM_GLOBAL const uint4 *)c;
    const size_t nv = (size_t)n / GM_VW;
    gm_u64 suspect = 0, wrong = 0, first = n;
    GM_FOR_EACH(j, nv) suspect += gm_stream_vec_wrong(c4[j], j, stream_kernel, values, s, scale);
    GM_TAIL(i, (size_t)n) suspect += gm_stream_wrong(bits[i], i, stream_kernel, values, s, scale);
    if (suspect) {
        GM_FOR_EACH(j, nv) for (size_t i = j * GM_VW; i < (j + 1) * GM_VW; i++)
        {
            if (gm_stream_wrong(bits[i], i, stream_kernel, values, s, scale) && wrong++ == 0)
                first = i;
        }
        GM_TAIL(i, (size_t)n) if (gm_stream_wrong(bits[i], i, stream_kernel, values, s, scale) && wrong++ == 0)
            first = first < i ? first : i;
    }
    gm_verdict_write(count_of, first_of, wrong, first, result);
}
