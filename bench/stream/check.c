#include "bench/stream/check.h"

#include "bench/bench.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { K_READ, K_WRITE, K_COPY, K_SCALE, K_ADD, K_TRIAD, K_DOT };

/* Inputs cycle through a table of values in [-1, 1) in steps of 1/1024,
 * picked by a hash of the index, so neighbours differ and no short period
 * repeats (the table index mixes in the index's high bits). */
#define PATTERN_TABLE STREAM_PATTERN_TABLE

size_t stream_pattern_index(size_t i, unsigned which)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull + which * 0xbf58476d1ce4e5b9ull;
    return (size_t)((x ^ (x >> 29)) >> 52) & (PATTERN_TABLE - 1);
}

/* The value the write kernel stores at i (see kernels/stream.cl). */
static float write_value(size_t i)
{
    return (float)((int)(i & 255u) - 128) * (1.0f / 128.0f);
}

/* The pattern `which`'s table in precision p: each value as stored
 * (es bytes at t * es of `stored`) and as it reads back (`value`). */
static void pattern_table(gm_precision p, unsigned which, unsigned char *stored, float *value)
{
    for (size_t t = 0; t < PATTERN_TABLE; t++) {
        uint64_t x = (uint64_t)t * 0x94d049bb133111ebull + which;
        gm_store(p, stored, t, (float)((int)((x >> 40) & 2047) - 1024) / 1024.0f, STREAM_INT8_SCALE);
        value[t] = gm_load(p, stored, t, STREAM_INT8_SCALE);
    }
}

/* Element i of dst = element t of the table, es bytes each. */
static void put_element(unsigned char *dst, size_t i, const unsigned char *table, size_t t, size_t es)
{
    switch (es) {
    case 1: dst[i] = table[t]; break;
    case 2: memcpy(dst + 2 * i, table + 2 * t, 2); break;
    default: memcpy(dst + 4 * i, table + 4 * t, 4); break;
    }
}

/* The tables of a (pattern 0) and b (pattern 1). */
typedef struct {
    unsigned char stored[2][PATTERN_TABLE * 4];
    float value[2][PATTERN_TABLE];
} pattern_tables;

/* stream_data_init fills the arrays in STREAM_INIT_SLICES equal slices of
 * the index range, up to STREAM_INIT_THREADS at once (one a core): each
 * slice's sums add in index order and the slices' in slice order, so the
 * reference sums are the same however many threads ran. */
#define STREAM_INIT_SLICES 64
#define STREAM_INIT_THREADS 16
#define STREAM_INIT_ALONE ((size_t)1 << 20)   /* fewer elements: one thread */

typedef struct {
    double a, abs_a, ab, abs_ab;
} slice_sums;

typedef struct {
    stream_data *d;
    const pattern_tables *t;
    slice_sums *sums;           /* STREAM_INIT_SLICES */
    unsigned first, step;       /* this job's slices: first, first + step, ... */
} init_job;

/* One pass over slice `slice`: both arrays and its reference sums (as if
 * each element were read back from the arrays). */
static void fill_slice(const init_job *j, unsigned slice)
{
    stream_data *d = j->d;
    const pattern_tables *t = j->t;
    size_t es = gm_precision_size(d->prec);
    size_t width = d->n / STREAM_INIT_SLICES, begin = width * slice;
    size_t end = slice + 1 == STREAM_INIT_SLICES ? d->n : begin + width;   /* the last takes the rest */
    slice_sums s = {0, 0, 0, 0};
    for (size_t i = begin; i < end; i++) {
        size_t ia = stream_pattern_index(i, 0), ib = stream_pattern_index(i, 1);
        put_element(d->a, i, t->stored[0], ia, es);
        put_element(d->b, i, t->stored[1], ib, es);
        double a = t->value[0][ia], b = t->value[1][ib];
        s.a += a;
        s.abs_a += fabs(a);
        s.ab += a * b;
        s.abs_ab += fabs(a * b);
    }
    j->sums[slice] = s;
}

static void *run_init_job(void *arg)
{
    const init_job *j = arg;
    for (unsigned slice = j->first; slice < STREAM_INIT_SLICES; slice += j->step)
        fill_slice(j, slice);
    return NULL;
}

int stream_data_init(stream_data *d, gm_precision p, size_t n)
{
    memset(d, 0, sizeof *d);
    size_t es = gm_precision_size(p);
    d->prec = p;
    d->n = n;
    d->a = malloc(n * es);
    d->b = malloc(n * es);
    d->values = malloc(2 * PATTERN_TABLE * sizeof *d->values);
    pattern_tables *t = malloc(sizeof *t);
    slice_sums sums[STREAM_INIT_SLICES];
    if (!d->a || !d->b || !d->values || !t) {
        free(t);
        stream_data_release(d);
        return -1;
    }
    pattern_table(p, 0, t->stored[0], t->value[0]);
    pattern_table(p, 1, t->stored[1], t->value[1]);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned jobs = n < STREAM_INIT_ALONE || cores < 2           ? 1u
                    : cores > STREAM_INIT_THREADS ? STREAM_INIT_THREADS
                                                  : (unsigned)cores;
    init_job job[STREAM_INIT_THREADS];
    pthread_t thread[STREAM_INIT_THREADS];
    bool started[STREAM_INIT_THREADS] = {false};
    for (unsigned k = 0; k < jobs; k++)
        job[k] = (init_job){d, t, sums, k, jobs};
    /* Jobs 1.. on threads of their own; job 0, and any job whose thread
     * could not start, on this one. */
    for (unsigned k = 1; k < jobs; k++)
        started[k] = pthread_create(&thread[k], NULL, run_init_job, &job[k]) == 0;
    run_init_job(&job[0]);
    for (unsigned k = 1; k < jobs; k++) {
        if (started[k])
            pthread_join(thread[k], NULL);
        else
            run_init_job(&job[k]);
    }
    for (unsigned slice = 0; slice < STREAM_INIT_SLICES; slice++) {
        d->sum_a += sums[slice].a;
        d->sum_abs_a += sums[slice].abs_a;
        d->sum_ab += sums[slice].ab;
        d->sum_abs_ab += sums[slice].abs_ab;
    }
    memcpy(d->values, t->value[0], PATTERN_TABLE * sizeof *d->values);
    memcpy(d->values + PATTERN_TABLE, t->value[1], PATTERN_TABLE * sizeof *d->values);
    free(t);
    return 0;
}

void stream_data_release(stream_data *d)
{
    free(d->a);
    free(d->b);
    free(d->values);
    d->a = d->b = NULL;
    d->values = NULL;
}

/* The float the kernel computes at i, before it is stored; *magnitude
 * receives the sum of the operands' magnitudes (what fp32 rounding of the
 * arithmetic scales with). */
static float expected_value(const stream_data *d, int k, size_t i, double *magnitude)
{
    const float s = STREAM_INT8_SCALE;
    float a = k == K_WRITE ? 0.0f : gm_load(d->prec, d->a, i, s);
    float b = (k == K_ADD || k == K_TRIAD) ? gm_load(d->prec, d->b, i, s) : 0.0f;
    float v = NAN;
    switch (k) {
    case K_WRITE: v = write_value(i); break;
    case K_COPY: v = a; break;
    case K_SCALE: v = STREAM_SCALAR * a; break;
    case K_ADD: v = a + b; break;
    case K_TRIAD: v = a + STREAM_SCALAR * b; break;
    }
    *magnitude = fabs(a) + fabs(k == K_TRIAD ? STREAM_SCALAR * b : b) + fabs(v);
    return v;
}

static bool check_element(const stream_data *d, int k, const void *out, size_t i, char *note, size_t len)
{
    unsigned char tmp[4];
    double magnitude;
    gm_store(d->prec, tmp, 0, expected_value(d, k, i, &magnitude), STREAM_INT8_SCALE);
    double want = gm_load(d->prec, tmp, 0, STREAM_INT8_SCALE);
    double got = gm_load(d->prec, out, i, STREAM_INT8_SCALE);
    /* The device computes the same fp32 value as this reference, but for
     * a + s * b, which it may fuse: within 2^-22 * magnitude (a few fp32
     * roundings). Rounded to the storage format, the two may then land on
     * adjacent values, one spacing apart: for the floats 2u * max(|want|,
     * least normal) with the format's unit roundoff u (fp32 2^-24, fp16
     * 2^-11, bf16 2^-8, fp8e4m3 2^-4, fp8e5m2 2^-3: gm_unit_roundoff);
     * for int8 one quantisation step. Write, copy and scale have nothing
     * to fuse: their results match exactly, well inside this bound. */
    double u = gm_unit_roundoff(d->prec);
    double spacing = u > 0 ? 2.0 * u * fmax(fabs(want), gm_least_normal(d->prec))
                           : gm_tolerance(d->prec, want, STREAM_INT8_SCALE);
    double tol = spacing + 0x1p-22 * magnitude;
    if (fabs(got - want) <= tol)
        return true;
    snprintf(note, len, "element %zu: expected %.9g, got %.9g", i, want, got);
    return false;
}

void stream_element_note(const stream_data *d, int k, const void *out, size_t i, char *note, size_t len)
{
    unsigned char tmp[4];
    double magnitude;
    gm_store(d->prec, tmp, 0, expected_value(d, k, i, &magnitude), STREAM_INT8_SCALE);
    snprintf(note, len, "element %zu: expected %.9g, got %.9g", i, gm_load(d->prec, tmp, 0, STREAM_INT8_SCALE),
             gm_load(d->prec, out, i, STREAM_INT8_SCALE));
}

static bool verify_sum(double got, double want, double sum_abs, size_t n, size_t global, char *note,
                       size_t len)
{
    /* fp32 accumulation: each work item adds about n/global terms, then a
     * tree of partials; bound the rounding by that many ulps of sum|x|. */
    double terms = (double)(n / (global ? global : 1) + 1) + 64.0;
    double tol = 4.0 * 0x1p-24 * terms * sum_abs + 1e-30;
    if (fabs(got - want) <= tol)
        return true;
    snprintf(note, len, "sum: expected %.9g, got %.9g (tolerance %.3g)", want, got, tol);
    return false;
}

bool stream_verify(const stream_data *d, int k, gm_precision p, const void *out, size_t n,
                   size_t groups, size_t global, unsigned rep, char *note, size_t note_len)
{
    (void)p;
    if (k == K_READ || k == K_DOT) {
        double got = 0.0;
        for (size_t g = 0; g < groups; g++)
            got += ((const float *)out)[g];
        return k == K_READ ? verify_sum(got, d->sum_a, d->sum_abs_a, n, global, note, note_len)
                           : verify_sum(got, d->sum_ab, d->sum_abs_ab, n, global, note, note_len);
    }
    if (k == K_COPY) {   /* a copy must be bit-exact: compare it all */
        if (memcmp(out, d->a, n * gm_precision_size(d->prec)) == 0)
            return true;
        size_t es = gm_precision_size(d->prec), i = 0;
        while (memcmp((const char *)out + i * es, (const char *)d->a + i * es, es) == 0)
            i++;
        return check_element(d, k, out, i, note, note_len);
    }
    if (n <= STREAM_FULL_CHECK_MAX) {
        for (size_t i = 0; i < n; i++)
            if (!check_element(d, k, out, i, note, note_len))
                return false;
        return true;
    }
    /* Both ends, then seeded random blocks (cache-friendly) and single
     * elements across the whole array. */
    for (size_t i = 0; i < STREAM_CHECK_BLOCK; i++)
        if (!check_element(d, k, out, i, note, note_len) || !check_element(d, k, out, n - 1 - i, note, note_len))
            return false;
    uint64_t x = 0x2545f4914f6cdd1dull ^ ((uint64_t)rep << 32) ^ (uint64_t)k;
    for (size_t j = 0; j < STREAM_CHECK_BLOCKS + STREAM_CHECK_SINGLES; j++) {
        gm_xorshift(&x);
        size_t len = j < STREAM_CHECK_BLOCKS ? STREAM_CHECK_BLOCK : 1;
        size_t start = (size_t)(x % (n - len + 1));
        for (size_t i = start; i < start + len; i++)
            if (!check_element(d, k, out, i, note, note_len))
                return false;
    }
    return true;
}
