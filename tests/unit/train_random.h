/*
 * Reproducible random inputs of the training kernels' tests: uniform in
 * [-1, 1) from a 64-bit linear congruential generator, one stream a test
 * program, and NF4 weights made of them.
 */
#ifndef GM_TRAIN_RANDOM_H
#define GM_TRAIN_RANDOM_H

#include <stdint.h>
#include <stdlib.h>

#include "bench/workloads/train_ref.h"

static uint64_t train_rng = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
    train_rng = train_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(train_rng >> 11) / 4503599627370496.0 - 1.0;
}

/* n values uniform in [-scale, scale), malloc'ed (freed by the caller). */
static double *randoms(size_t n, double scale)
{
    double *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = uniform() * scale;
    return v;
}

/* n weights (a multiple of 64) uniform in [-scale, scale) in NF4: a
 * linear second map code2 for the absmax values, the reference's
 * quantisation (bench/workloads/train_ref.h). Release with nf4_free. */
typedef struct {
    size_t n;
    double *w;
    float code2[256], *scale2, offset;
    uint8_t *codes, *absmax_q;
} nf4_sample;

static nf4_sample nf4_random(size_t n, double scale)
{
    nf4_sample q = {.n = n, .w = randoms(n, scale)};
    for (int i = 0; i < 256; i++)
        q.code2[i] = -1.0f + 2.0f * (float)i / 255.0f;
    q.scale2 = malloc((n / 64 + 255) / 256 * sizeof *q.scale2);
    q.codes = malloc(n / 2);
    q.absmax_q = malloc(n / 64);
    assert_true(q.scale2 && q.codes && q.absmax_q);
    gm_ref_nf4_quantize(q.w, n, q.code2, q.codes, q.absmax_q, q.scale2, &q.offset);
    return q;
}

static void nf4_free(nf4_sample *q)
{
    free(q->w), free(q->scale2), free(q->codes), free(q->absmax_q);
}

#endif
