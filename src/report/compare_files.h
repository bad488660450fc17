/*
 * What gpumem compare shows beside its point-by-point report
 * (analysis/compare_output.h): the card sheet of the runs on stdout, and
 * the files of --out DIR: compare.md (the card sheet, then the whole
 * point-by-point report), compare.html (the card sheet and the overlay
 * plots inline), compare.csv and the overlay plots (PNG, SVG): bandwidth
 * by array size a panel per kernel family, throughput by batch, and for
 * cards the OOM frontiers and swap latency, a line per run and series
 * (the data gnuplot reads in DIR/data/); cards have a colour a run, other
 * runs a colour a run and series.
 */
#ifndef GM_COMPARE_FILES_H
#define GM_COMPARE_FILES_H

#include "analysis/compare.h"

#include <stddef.h>
#include <stdio.h>

/* The card sheet of c's runs with its family rows (card_sheet.h), as a
 * terminal table (markdown 0) or Markdown. Returns 0, or -1 with err. */
int gm_compare_print_cards(FILE *f, const gm_comparison *c, int markdown, char *err, size_t len);

/* Writes DIR's files (made if missing). Returns 0, or -1 with err naming
 * the file that could not be written (or gnuplot's failure). */
int gm_compare_write(const gm_comparison *c, const char *dir, char *err, size_t len);

#endif
