/*
 * Which way is better for each metric of results.csv: lower (times,
 * latencies, errors), higher (bandwidth, throughput, the largest batch),
 * or neither (facts such as the memory model's prediction). One table for
 * every command that judges runs against each other (gpumem fleet, and
 * comparisons between runs).
 */
#ifndef GM_METRIC_DIRECTION_H
#define GM_METRIC_DIRECTION_H

typedef enum {
    GM_BETTER_NEITHER = 0,   /* not judged: a fact, not a performance */
    GM_BETTER_LOWER = -1,
    GM_BETTER_HIGHER = 1,
} gm_metric_direction;

/* The direction of metric `name`; GM_BETTER_NEITHER for unknown names. */
gm_metric_direction gm_metric_direction_of(const char *name);

#endif
