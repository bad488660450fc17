/*
 * Printing a comparison (src/compare.h): a terminal table or Markdown (the
 * runs, the verdict, one row per point and metric with a column group per
 * run, the points left out and why) and a tidy CSV (one row per result
 * and per point left out; columns in docs/results.md).
 */
#ifndef GM_COMPARE_OUTPUT_H
#define GM_COMPARE_OUTPUT_H

#include "analysis/compare.h"

#include <stdio.h>

/* Table (markdown 0) or Markdown (1). Returns 0, or -1 (write failed, out of memory). */
int gm_compare_print_report(FILE *f, const gm_comparison *c, int markdown);
int gm_compare_print_csv(FILE *f, const gm_comparison *c);
/* One line per regression: "RUN: POINT METRIC: BASE -> NEW UNIT (+12.3%, p=...)". */
void gm_compare_print_regressions(FILE *f, const gm_comparison *c, const char *prefix);

/* Under a gate: the gated tests whose MDE exceeds the threshold, counted
 * and the first named, on one line ("cannot see a 5% change in N of M
 * gated points (MDE ...): ...; bench with more rounds"). Prints nothing
 * where there is none. Returns their count. */
int gm_compare_print_blind(FILE *f, const gm_comparison *c, const char *prefix);

#endif
