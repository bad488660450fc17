/*
 * Saturating arithmetic on byte counts: UINT64_MAX stands for "does not
 * fit" and stays so through every operation.
 */
#ifndef GM_SATURATE_H
#define GM_SATURATE_H

#include <stdint.h>

static inline uint64_t gm_sat_mul(uint64_t x, uint64_t y)
{
    uint64_t r;
    return __builtin_mul_overflow(x, y, &r) ? UINT64_MAX : r;
}

static inline uint64_t gm_sat_add(uint64_t x, uint64_t y)
{
    uint64_t r;
    return __builtin_add_overflow(x, y, &r) ? UINT64_MAX : r;
}

static inline uint64_t gm_sat_mul3(uint64_t x, uint64_t y, uint64_t z) { return gm_sat_mul(gm_sat_mul(x, y), z); }

/* x shared over n ranks, rounded up: the largest rank's share. */
static inline uint64_t gm_sat_share(uint64_t x, uint64_t n)
{
    return x == UINT64_MAX ? x : x / n + (x % n != 0);
}

#endif
