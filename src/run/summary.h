/* The short tables `gpumem bench` prints at the end: the best median of
 * each (suite, workload, precision) among ok rows of its headline metric. */
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
} gm_summary;

void gm_summary_init(gm_summary *s);
void gm_summary_release(gm_summary *s);
/* Takes note of an ok row of a suite's headline metric (stream:
 * bandwidth, workloads: throughput); other rows are ignored. */
void gm_summary_add(gm_summary *s, const gm_row *r);
void gm_summary_print(const gm_summary *s, FILE *f);

#endif
