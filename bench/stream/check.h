/*
 * Input data and CPU reference for the stream suite. Inputs are a seeded,
 * index-dependent pattern (so a kernel that skips, repeats or misplaces
 * elements is caught), stored in the precision under test.
 */
#ifndef GM_STREAM_CHECK_H
#define GM_STREAM_CHECK_H

#include "lib/precision.h"

#include <stdbool.h>
#include <stddef.h>

#define STREAM_SCALAR 0.4f
#define STREAM_INT8_SCALE (1.0f / 32.0f)   /* int8 covers [-3.97, 3.97] */
/* Up to STREAM_FULL_CHECK_MAX elements every element is checked; beyond
 * it, both ends, STREAM_CHECK_BLOCKS seeded random blocks of
 * STREAM_CHECK_BLOCK elements and STREAM_CHECK_SINGLES random elements
 * (a new sample every repetition). Copies are compared whole. */
#define STREAM_FULL_CHECK_MAX ((size_t)1 << 20)
#define STREAM_CHECK_BLOCK ((size_t)4096)
#define STREAM_CHECK_BLOCKS 64
#define STREAM_CHECK_SINGLES 65536
/* Entries of each input pattern's table (kernels/stream.cl's
 * GM_PATTERN_TABLE: the device recomputes the pattern from them). */
#define STREAM_PATTERN_TABLE 4096

typedef struct {
    gm_precision prec;
    size_t n;
    void *a, *b;                   /* n elements each, in prec */
    double sum_a, sum_abs_a;       /* reference for read */
    double sum_ab, sum_abs_ab;     /* reference for dot */
    /* The patterns' values as they read back in prec: a's table, then
     * b's (2 * STREAM_PATTERN_TABLE floats); element i of a is entry
     * stream_pattern_index(i, 0) of the first, of b entry
     * stream_pattern_index(i, 1) of the second. The device's whole-array
     * check (stream_verify in kernels/stream.cl) reads them. */
    float *values;
} stream_data;

/* Which entry of its table element i of pattern `which` (0: a, 1: b)
 * holds: a 64-bit hash of the index, the same on the device. */
size_t stream_pattern_index(size_t i, unsigned which);

/* Allocates and fills a and b and their reference sums, on up to one
 * thread a host core (the sums do not depend on how many). Returns 0, or
 * -1 if host memory ran out. */
int stream_data_init(stream_data *d, gm_precision p, size_t n);
void stream_data_release(stream_data *d);

/*
 * Checks the read-back output of kernel k (index into
 * gm_stream_kernel_names): n elements of c, or `groups` float partial sums
 * for read and dot, computed by `global` work items. rep seeds the sample.
 * Returns true if correct; otherwise false with the first difference in
 * note.
 */
bool stream_verify(const stream_data *d, int k, gm_precision p, const void *out, size_t n,
                   size_t groups, size_t global, unsigned rep, char *note, size_t note_len);

/* Writes "element I: expected X, got Y" for element i of kernel k's
 * output (read back whole in out), whether or not it is within the
 * sampled check's tolerance: the note of a mismatch the device found. */
void stream_element_note(const stream_data *d, int k, const void *out, size_t i, char *note, size_t len);

#endif
