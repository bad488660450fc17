/*
 * The card sheet: runs of different devices side by side, a column a run,
 * in the rows of the report's three answers (report_figures.h, the same
 * figures the report quotes):
 *   how much memory is usable: the largest total (with its share of the
 *     memory advertised, or of the oom suite's cap), the largest block;
 *   how fast: device-memory and cache bandwidth (the device memory's share
 *     of its theoretical peak where known), pinned h2d / d2h / bidir at
 *     the largest block, the vendor GEMM's best point per precision;
 *   where the models stop fitting: a row a search (model or workload,
 *     precision, mode), the largest batch at each sequence length, the
 *     best over the allocation patterns;
 *   the stress checks' verdicts;
 * then, given the comparison of the same runs, a row per suite and kernel
 * family: the geometric mean over its points and metrics of each run's
 * ratio to BASE, oriented so that above 1 is better (a time's ratio is
 * inverted), with the range and the count. "-" marks a figure a run did
 * not measure.
 */
#ifndef GM_CARD_SHEET_H
#define GM_CARD_SHEET_H

#include "analysis/compare.h"
#include "lib/text_grid.h"

#include <stddef.h>
#include <stdio.h>

typedef struct {
    const char *dir;        /* the run folder */
    const char *label;      /* its column's title */
} gm_card;

/* Builds the sheet of cards[0..n) into g (initialised here): a column of
 * row names, then one a card; the first row names the columns, a row
 * whose cells but the first are empty heads a group. c: the comparison
 * whose runs are the cards, in order, for the family rows (NULL: none).
 * Returns 0, or -1 with err (a results.csv that cannot be read, out of
 * memory); g is then freed. */
int gm_card_sheet(gm_grid *g, const gm_card *cards, int n, const gm_comparison *c, char *err, size_t len);

/* The sheet as an HTML table (id "cards"), a group's head as a heading row. */
void gm_card_sheet_html(FILE *f, const gm_grid *g);

#endif
