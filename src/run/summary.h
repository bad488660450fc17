/* The short tables `gpumem bench` prints at the end: the best median of
 * each (suite, workload, precision) among ok rows of its headline metric.
 * Stream bandwidth counts there only from arrays of at least 4x the
 * last-level cache (device memory) when llc_bytes is set; the best point
 * from arrays below the cache is quoted apart, as cache bandwidth. */
#ifndef GM_SUMMARY_H
#define GM_SUMMARY_H

#include "run/results.h"

#include <stdio.h>

typedef struct {
    char suite[16], workload[24], precision[8], unit[16];
    double best;
    uint64_t at_bytes;
} gm_summary_entry;

typedef struct {
    gm_summary_entry *entries;
    size_t n, cap;
    uint64_t llc_bytes;          /* the device's last-level cache; 0: unknown (every size counts) */
    gm_summary_entry cache;      /* best stream point below the cache (best 0: none) */
    uint64_t largest_stream;     /* the largest stream array seen */
} gm_summary;

/* An empty summary (llc_bytes 0: set it before adding rows). */
void gm_summary_init(gm_summary *s);
void gm_summary_release(gm_summary *s);
/* Takes note of an ok row of a suite's headline metric (stream:
 * bandwidth, workloads: throughput); other rows are ignored. */
void gm_summary_add(gm_summary *s, const gm_row *r);
void gm_summary_print(const gm_summary *s, FILE *f);

#endif
