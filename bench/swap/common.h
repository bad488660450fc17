/*
 * What the swap suite's parts share: checksummed payloads and the rows of
 * a latency distribution.
 */
#ifndef GM_SWAP_COMMON_H
#define GM_SWAP_COMMON_H

#include "bench/bench.h"

#define GM_SWAP_MIN_REPS 20       /* latency percentiles need a sample */

/* Repetitions for a latency distribution: --reps, at least GM_SWAP_MIN_REPS. */
unsigned gm_swap_reps(const gm_bench *b);

/* A payload that differs by `seed`, and its checksum (word at a time,
 * then byte by byte over the tail). */
void gm_swap_fill(unsigned char *p, size_t n, uint64_t seed);

/* The same payload in pieces: after init(seed), next() writes the
 * following n bytes; pieces that are multiples of 8 bytes, the last one
 * excepted, concatenate to gm_swap_fill's payload. */
typedef struct { uint64_t x; } gm_swap_stream;
void gm_swap_stream_init(gm_swap_stream *s, uint64_t seed);
void gm_swap_stream_next(gm_swap_stream *s, unsigned char *p, size_t n);
uint64_t gm_swap_checksum(const unsigned char *p, size_t n);

/* Writes the rows of one measured point from `row` (suite, workload,
 * variant, pattern, bytes, batch filled in): latency_p50, _p90, _p99,
 * _max in microseconds of the n samples `ms`, and bandwidth for `moved`
 * bytes each. `per` > 1 adds latency_per_block_p50 and _p99 (the latency
 * over `per`). Returns 0, or -1 when rows cannot be written. */
int gm_swap_emit_latency(gm_bench *b, gm_row row, const double *ms, size_t n, double moved, unsigned per);

/* Writes a row with no value: status and note, under metric latency_p50. */
int gm_swap_emit_status(gm_bench *b, gm_row row, gm_row_status status, const char *note);


/* Whether a point that needs `device_bytes` of device memory and
 * `host_bytes` of host memory may be attempted, checked before anything
 * is allocated: the device bytes within free device memory (under the
 * run's cap; not checked where neither the backend nor a cap tells), the
 * host bytes within half the host's available memory, and on a CPU
 * device, whose memory is the host's, both together within free memory
 * under the cap. When not, writes why into note (for a `skipped` row). */
bool gm_swap_fits(gm_bench *b, uint64_t device_bytes, uint64_t host_bytes, char *note, size_t len);

#endif
