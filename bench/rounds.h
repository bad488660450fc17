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

#include "run/results.h"

#include <stddef.h>

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

/* Writes a row and its samples as they are: 0, or -1 when it could not
 * (the writer keeps why). */
typedef int (*gm_row_writer)(void *ctx, const gm_row *row, const double *samples, size_t n);

/* A row of round `round` (0-based) of `rounds` > 1, as above: its samples
 * alone into run (under the round's number), or the row through write
 * (over every round's samples on the last). Returns 0; -1 when write
 * failed (1 and err when the pool or run failed: out of memory, a key too
 * long, samples.csv not written). */
int gm_rounds_emit(struct gm_round_pool *pool, int round, int rounds, gm_run *run, const gm_row *row,
                   const double *samples, size_t n, gm_row_writer write, void *ctx, char *err, size_t err_len);

#endif
