/*
 * Storage precisions and their host-side conversions, bit-exact with the
 * device side in kernels/gm_portable.h (round to nearest even everywhere).
 */
#ifndef GM_PRECISION_H
#define GM_PRECISION_H

#include <stddef.h>
#include <stdint.h>

/*
 * fp8e4m3 and fp8e5m2 are the OCP 8-bit floats (OFP8, 2023): e4m3 has no
 * infinities, saturates (finite overflow and +-inf store as +-448) and its
 * one NaN is S.1111.111; e5m2 is IEEE-like (overflow rounds to +-inf).
 * Both store NaN as 0x7f. int4 is a weight precision only: two signed
 * 4-bit values per byte (element i in byte i / 2, low nibble first), with
 * one fp16 scale per group of weights along the input dimension.
 */
typedef enum {
    GM_FP32,
    GM_FP16,
    GM_BF16,
    GM_INT8,
    GM_FP8E4M3,
    GM_FP8E5M2,
    GM_INT4,
    GM_PREC_COUNT
} gm_precision;

/* The precisions a sweep runs when none is named (those every suite has). */
#define GM_PREC_DEFAULT_MASK ((1u << GM_FP32) | (1u << GM_FP16) | (1u << GM_BF16) | (1u << GM_INT8))
#define GM_PREC_IS_FP8(p) ((p) == GM_FP8E4M3 || (p) == GM_FP8E5M2)

const char *gm_precision_name(gm_precision p);      /* "fp32" */
/* Returns the precision named s, or -1. */
int gm_precision_parse(const char *s);
size_t gm_precision_size(gm_precision p);           /* bytes per element (int4: 1, see below) */
unsigned gm_precision_bits(gm_precision p);         /* bits per element (int4: 4) */

/* Stores v at element i of dst in precision p (int8: q = round(v/scale),
 * clamped to [-127, 127]). */
void gm_store(gm_precision p, void *dst, size_t i, float v, float scale);
/* Loads element i of src as float. */
float gm_load(gm_precision p, const void *src, size_t i, float scale);

/* The unit roundoff u = 2^-(mantissa bits + 1) of a float format (fp32
 * 2^-24, fp16 2^-11, bf16 2^-8, fp8e4m3 2^-4, fp8e5m2 2^-3; 0 for int8
 * and int4), and its least normal magnitude: a value e rounds to within
 * u * max(|e|, least normal) (overflow aside), and adjacent values lie
 * at most 2u * max(|e|, least normal) apart. */
double gm_unit_roundoff(gm_precision p);
double gm_least_normal(gm_precision p);

/* The largest difference two correct results may show in precision p for
 * an expected value e: one unit in the last place of the storage format
 * (and one quantisation step for int8), to allow for fused multiply-add. */
double gm_tolerance(gm_precision p, double e, float scale);

uint16_t gm_float_to_half(float f);
float gm_half_to_float(uint16_t h);
uint16_t gm_float_to_bf16(float f);
float gm_bf16_to_float(uint16_t b);

uint8_t gm_float_to_fp8e4m3(float f);                /* RNE, saturating */
float gm_fp8e4m3_to_float(uint8_t c);
uint8_t gm_float_to_fp8e5m2(float f);                /* RNE, overflow to inf */
float gm_fp8e5m2_to_float(uint8_t c);

/*
 * int4 weights W[k, n] (row-major, k the input dimension): packed bytes,
 * ceil(k * n / 2), and fp16 scales, one per `group` rows of a column:
 * scale[(kk / group) * n + j]. Quantisation is symmetric, q in [-8, 7],
 * scale = absmax / 7 of the group rounded to fp16 (1 for an all-zero
 * group), q = rint(w / scale) clamped.
 */
uint64_t gm_int4_packed_bytes(uint64_t k, uint64_t n);
uint64_t gm_int4_scale_bytes(uint64_t k, uint64_t n, uint64_t group);
void gm_int4_quantize(const float *w, size_t k, size_t n, size_t group, uint8_t *packed, uint16_t *scales);
/* Its two steps: the fp16 scale of a group whose largest magnitude is
 * amax, and the code of weight w in a group of (fp16) scale `scale`. */
uint16_t gm_int4_scale(float amax);
int gm_int4_code(float w, float scale);
/* The dequantised weight W[kk, j]. */
float gm_int4_load(const uint8_t *packed, const uint16_t *scales, size_t n, size_t group, size_t kk, size_t j);

#endif
