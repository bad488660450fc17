#include "lib/precision.h"

#include <math.h>
#include <string.h>

static const char *const names[GM_PREC_COUNT] = {"fp32", "fp16", "bf16", "int8"};
static const size_t sizes[GM_PREC_COUNT] = {4, 2, 2, 1};

const char *gm_precision_name(gm_precision p) { return p < GM_PREC_COUNT ? names[p] : "?"; }
size_t gm_precision_size(gm_precision p) { return sizes[p]; }

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
    case GM_PREC_COUNT: break;
    }
    return NAN;
}

double gm_tolerance(gm_precision p, double e, float scale)
{
    static const int mant_bits[GM_PREC_COUNT] = {23, 10, 7, 0};
    if (p == GM_INT8)
        return (double)scale * 1.001;
    double ulp = ldexp(fabs(e) > 0x1p-14 ? fabs(e) : 0x1p-14, -mant_bits[p]);
    return 2.0 * ulp;
}
