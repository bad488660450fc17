/*
 * Storage precisions and their host-side conversions, bit-exact with the
 * device side in kernels/gm_portable.h (round to nearest even everywhere).
 */
#ifndef GM_PRECISION_H
#define GM_PRECISION_H

#include <stddef.h>
#include <stdint.h>

typedef enum { GM_FP32, GM_FP16, GM_BF16, GM_INT8, GM_PREC_COUNT } gm_precision;

const char *gm_precision_name(gm_precision p);      /* "fp32" */
/* Returns the precision named s, or -1. */
int gm_precision_parse(const char *s);
size_t gm_precision_size(gm_precision p);           /* bytes per element */

/* Stores v at element i of dst in precision p (int8: q = round(v/scale),
 * clamped to [-127, 127]). */
void gm_store(gm_precision p, void *dst, size_t i, float v, float scale);
/* Loads element i of src as float. */
float gm_load(gm_precision p, const void *src, size_t i, float scale);

/* The largest difference two correct results may show in precision p for
 * an expected value e: one unit in the last place of the storage format
 * (and one quantisation step for int8), to allow for fused multiply-add. */
double gm_tolerance(gm_precision p, double e, float scale);

uint16_t gm_float_to_half(float f);
float gm_half_to_float(uint16_t h);
uint16_t gm_float_to_bf16(float f);
float gm_bf16_to_float(uint16_t b);

#endif
