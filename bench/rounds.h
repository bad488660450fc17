/*
 * gpumem bench --rounds K: every point is measured in K rounds, the whole
 * point list once a round, each round taking a share of the repetitions,
 * so that a slow minute of a shared machine touches every point alike and
 * gpumem compare can judge a change against the variation between rounds.
 * A round before the last writes only its samples (samples.csv, under the
 * round's number); the last writes each row once, over every round's
 * samples, so results.csv keeps one row per point and metric. A row that
 * fails (any status but ok) in an earlier round is written then, once,
 * and the point's later rows are dropped.
 */
#ifndef GM_ROUNDS_H
#define GM_ROUNDS_H

#include "bench/bench.h"

struct gm_round_pool;

/* An empty pool of earlier rounds' samples; NULL when out of memory. */
struct gm_round_pool *gm_round_pool_new(void);
void gm_round_pool_free(struct gm_round_pool *pool);

/* Refills the pool from a run folder cut back to its last finished point
 * (gpumem bench --resume): the samples of samples.csv, and the rows of
 * results.csv that failed. Returns 0, or -1 with err. */
int gm_round_pool_load(struct gm_round_pool *pool, const char *dir, char *err, size_t err_len);

/* The repetitions round `round` (0-based) of `rounds` takes of `reps`:
 * reps/rounds, one more for the first reps%rounds rounds, at least 1. */
unsigned gm_round_reps(unsigned reps, int round, int rounds);

/* gm_bench_emit of a run with rounds (b->rounds > 1, b->pool set): see
 * above. Returns 0, or -1 with b->output_failed and b->error set. */
int gm_rounds_emit(gm_bench *b, const gm_row *row, const double *samples, size_t n);

#endif
