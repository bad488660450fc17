/*
 * What the swap suite's parts share: checksummed payloads and the rows of
 * a latency distribution.
 */
#ifndef GM_SWAP_COMMON_H
#define GM_SWAP_COMMON_H

#include "bench.h"

#define GM_SWAP_MIN_REPS 20       /* latency percentiles need a sample */

/* Repetitions for a latency distribution: --reps, at least GM_SWAP_MIN_REPS. */
unsigned gm_swap_reps(const gm_bench *b);

/* A payload that differs by `seed`, and its checksum (word at a time,
 * then byte by byte over the tail). */
void gm_swap_fill(unsigned char *p, size_t n, uint64_t seed);
uint64_t gm_swap_checksum(const unsigned char *p, size_t n);

/* Writes the rows of one measured point from `row` (suite, workload,
 * variant, pattern, bytes, batch filled in): latency_p50, _p90, _p99,
 * _max in microseconds of the n samples `ms`, and bandwidth for `moved`
 * bytes each. `per` > 1 adds latency_per_block_p50 and _p99 (the latency
 * over `per`). Returns 0, or -1 when rows cannot be written. */
int gm_swap_emit_latency(gm_bench *b, gm_row row, const double *ms, size_t n, double moved, unsigned per);

/* Writes a row with no value: status and note, under metric latency_p50. */
int gm_swap_emit_status(gm_bench *b, gm_row row, gm_row_status status, const char *note);

gm_row_status gm_swap_status_of(gm_status st);

#endif
