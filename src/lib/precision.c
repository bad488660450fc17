#include "lib/precision.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static const char *const names[GM_PREC_COUNT] = {"fp32", "fp16", "bf16", "int8", "fp8e4m3", "fp8e5m2", "int4"};
static const size_t sizes[GM_PREC_COUNT] = {4, 2, 2, 1, 1, 1, 1};
static const unsigned bits[GM_PREC_COUNT] = {32, 16, 16, 8, 8, 8, 4};

const char *gm_precision_name(gm_precision p) { return p < GM_PREC_COUNT ? names[p] : "?"; }
size_t gm_precision_size(gm_precision p) { return sizes[p]; }
unsigned gm_precision_bits(gm_precision p) { return bits[p]; }

int gm_precision_parse(const char *s)
{
    for (int i = 0; i < GM_PREC_COUNT; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

uint16_t gm_float_to_bf16(float f)
{
    uint32_t u = f2u(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float gm_bf16_to_float(uint16_t b) { return u2f((uint32_t)b << 16); }

uint16_t gm_float_to_half(float f)
{
    uint32_t u = f2u(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u)                        /* inf or NaN */
        return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);
    if (abs >= 0x477ff000u)                        /* rounds past 65504 */
        return sign | 0x7c00u;
    if (abs < 0x38800000u) {                       /* subnormal or zero */
        if (abs < 0x33000000u)
            return sign;                           /* below half the least subnormal */
        uint32_t mant = (abs & 0x007fffffu) | 0x00800000u;
        int shift = 126 - (int)(abs >> 23);        /* 14..24 */
        uint32_t q = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1u)))
            q++;
        return sign | (uint16_t)q;
    }
    uint32_t h = ((abs >> 13) - (112u << 10));    /* rebias exponent 127 -> 15 */
    uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++;
    return sign | (uint16_t)h;
}

float gm_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f)
        return u2f(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        float v = ldexpf((float)mant, -24);
        return sign ? -v : v;
    }
    return u2f(sign | ((exp + 112u) << 23) | (mant << 13));
}

/*
 * fp8: float -> 8 bits with M mantissa bits and exponent bias `bias`,
 * rounded to nearest even on the fp32 bits directly (no double rounding).
 * kernels/gm_portable.h has the same steps (gm_float_to_fp8).
 */
static uint8_t float_to_fp8(float f, unsigned M, int bias, bool saturate)
{
    uint32_t u = f2u(f);
    uint32_t sign = (u >> 24) & 0x80u, abs = u & 0x7fffffffu;
    uint32_t maxcode = saturate ? 0x7eu : 0x7bu;        /* the largest finite */
    uint32_t over = saturate ? 0x7eu : 0x7cu;          /* what overflow stores */
    if (abs > 0x7f800000u)
        return 0x7f;                                   /* NaN */
    if (abs < 0x00800000u)
        return (uint8_t)sign;                          /* zero, fp32 subnormal */
    int e = (int)(abs >> 23) - 127;
    uint32_t mant = (abs & 0x007fffffu) | 0x00800000u;
    int emin = 1 - bias;
    uint32_t q;
    if (e < emin) {                                    /* fp8 subnormal */
        int shift = 23 - (int)M + emin - e;
        if (shift >= 25)
            return (uint8_t)sign;
        q = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
    } else {
        if (e + bias > 31)
            return (uint8_t)(sign | over);
        q = ((uint32_t)(e + bias) << M) | ((abs & 0x007fffffu) >> (23 - M));
        uint32_t rem = abs & ((1u << (23 - M)) - 1u), half = 1u << (22 - M);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
    }
    if (q > maxcode)
        return (uint8_t)(sign | over);
    return (uint8_t)(sign | q);
}

uint8_t gm_float_to_fp8e4m3(float f) { return float_to_fp8(f, 3, 7, true); }
uint8_t gm_float_to_fp8e5m2(float f) { return float_to_fp8(f, 2, 15, false); }

float gm_fp8e4m3_to_float(uint8_t c)
{
    uint32_t sign = (uint32_t)(c & 0x80u) << 24, exp = (c >> 3) & 0xfu, mant = c & 7u;
    if (exp == 15 && mant == 7)
        return u2f(0x7fc00000u | sign);
    if (exp == 0)
        return u2f(f2u((float)mant * 0x1p-9f) | sign);
    return u2f(sign | ((exp + 120u) << 23) | (mant << 20));
}

float gm_fp8e5m2_to_float(uint8_t c)
{
    uint32_t sign = (uint32_t)(c & 0x80u) << 24, exp = (c >> 2) & 0x1fu, mant = c & 3u;
    if (exp == 31)
        return u2f(sign | 0x7f800000u | (mant ? 0x00400000u : 0u));
    if (exp == 0)
        return u2f(f2u((float)mant * 0x1p-16f) | sign);
    return u2f(sign | ((exp + 112u) << 23) | (mant << 21));
}

uint64_t gm_int4_packed_bytes(uint64_t k, uint64_t n)
{
    uint64_t e;
    if (__builtin_mul_overflow(k, n, &e))
        return UINT64_MAX;
    return e / 2 + (e & 1u);
}

uint64_t gm_int4_scale_bytes(uint64_t k, uint64_t n, uint64_t group)
{
    uint64_t groups = group ? k / group + (k % group != 0) : 0, r;
    if (__builtin_mul_overflow(groups, n, &r) || __builtin_mul_overflow(r, (uint64_t)2, &r))
        return UINT64_MAX;
    return r;
}

uint16_t gm_int4_scale(float amax) { return gm_float_to_half(amax > 0.0f ? amax / 7.0f : 1.0f); }

int gm_int4_code(float w, float scale) { return (int)fminf(fmaxf(rintf(w / scale), -8.0f), 7.0f); }

void gm_int4_quantize(const float *w, size_t k, size_t n, size_t group, uint8_t *packed, uint16_t *scales)
{
    memset(packed, 0, (size_t)gm_int4_packed_bytes(k, n));
    for (size_t g = 0; g * group < k; g++)
        for (size_t j = 0; j < n; j++) {
            size_t end = (g + 1) * group < k ? (g + 1) * group : k;
            float amax = 0.0f;
            for (size_t kk = g * group; kk < end; kk++)
                amax = fmaxf(amax, fabsf(w[kk * n + j]));
            uint16_t sh = gm_int4_scale(amax);
            scales[g * n + j] = sh;
            float sc = gm_half_to_float(sh);
            for (size_t kk = g * group; kk < end; kk++) {
                size_t i = kk * n + j;
                packed[i / 2] |= (uint8_t)(((unsigned)gm_int4_code(w[i], sc) & 0xfu) << (4 * (i & 1)));
            }
        }
}

float gm_int4_load(const uint8_t *packed, const uint16_t *scales, size_t n, size_t group, size_t kk, size_t j)
{
    size_t i = kk * n + j;
    int q = (packed[i / 2] >> (4 * (i & 1))) & 0xf;
    q = q >= 8 ? q - 16 : q;
    return (float)q * gm_half_to_float(scales[kk / group * n + j]);
}

void gm_store(gm_precision p, void *dst, size_t i, float v, float scale)
{
    switch (p) {
    case GM_FP32: ((float *)dst)[i] = v; break;
    case GM_FP16: ((uint16_t *)dst)[i] = gm_float_to_half(v); break;
    case GM_BF16: ((uint16_t *)dst)[i] = gm_float_to_bf16(v); break;
    case GM_INT8: {
        float q = rintf(v / scale);
        q = fminf(fmaxf(q, -127.0f), 127.0f);
        ((int8_t *)dst)[i] = (int8_t)q;
        break;
    }
    case GM_FP8E4M3: ((uint8_t *)dst)[i] = gm_float_to_fp8e4m3(v); break;
    case GM_FP8E5M2: ((uint8_t *)dst)[i] = gm_float_to_fp8e5m2(v); break;
    case GM_INT4:   /* packed with group scales: gm_int4_quantize */
    case GM_PREC_COUNT: break;
    }
}

float gm_load(gm_precision p, const void *src, size_t i, float scale)
{
    switch (p) {
    case GM_FP32: return ((const float *)src)[i];
    case GM_FP16: return gm_half_to_float(((const uint16_t *)src)[i]);
    case GM_BF16: return gm_bf16_to_float(((const uint16_t *)src)[i]);
    case GM_INT8: return (float)((const int8_t *)src)[i] * scale;
    case GM_FP8E4M3: return gm_fp8e4m3_to_float(((const uint8_t *)src)[i]);
    case GM_FP8E5M2: return gm_fp8e5m2_to_float(((const uint8_t *)src)[i]);
    case GM_INT4:
    case GM_PREC_COUNT: break;
    }
    return NAN;
}

/* Mantissa bits of each float format (0: an integer format). */
static const int mant_bits[GM_PREC_COUNT] = {23, 10, 7, 0, 3, 2, 0};

double gm_unit_roundoff(gm_precision p)
{
    return mant_bits[p] ? ldexp(1.0, -mant_bits[p] - 1) : 0.0;
}

double gm_least_normal(gm_precision p)
{
    static const double least[GM_PREC_COUNT] = {0x1p-126, 0x1p-14, 0x1p-126, 0, 0x1p-6, 0x1p-14, 0};
    return least[p];
}

double gm_tolerance(gm_precision p, double e, float scale)
{
    /* Below this magnitude the bound stops shrinking: each format's least
     * normal (the subnormals' spacing is least_normal * 2^-mant), fp16's
     * for fp32 and bf16 too. */
    static const double least_normal[GM_PREC_COUNT] = {0x1p-14, 0x1p-14, 0x1p-14, 0, 0x1p-6, 0x1p-14, 0};
    if (p == GM_INT8 || p == GM_INT4)
        return (double)scale * 1.001;
    double ulp = ldexp(fabs(e) > least_normal[p] ? fabs(e) : least_normal[p], -mant_bits[p]);
    return 2.0 * ulp;
}
