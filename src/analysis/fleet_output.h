/*
 * A judged fleet (fleet.h) as text: a table for the terminal, Markdown, or
 * CSV. Table and Markdown hold the per-GPU summary (identity, host, run
 * folder, points judged and flagged, the worst deviation and where) and
 * the per-point table (fleet median, scale, the flagged GPUs; with up to
 * GM_FLEET_GPU_COLUMNS GPUs also one column per GPU). CSV is long: one row
 * per point per GPU with its value, the fleet median, the scale, the
 * deviation and whether it is flagged (schema in docs/results.md).
 */
#ifndef GM_FLEET_OUTPUT_H
#define GM_FLEET_OUTPUT_H

#include "analysis/fleet.h"

#include <stdbool.h>
#include <stdio.h>

typedef enum { GM_FLEET_TABLE, GM_FLEET_MARKDOWN, GM_FLEET_CSV } gm_fleet_format;

#define GM_FLEET_GPU_COLUMNS 8

/* What table and Markdown hold beside the per-GPU summary: the per-point
 * table (points; without it a line says how to see it), and what `cards`
 * prints after the summary (NULL: nothing), for the card sheet. CSV is
 * always the whole per-point table. */
typedef struct {
    bool points;
    void (*cards)(FILE *out, bool markdown, void *ctx);
    void *ctx;
} gm_fleet_extras;

/* x NULL: the per-point table, no cards. */
void gm_fleet_print(const gm_fleet *f, const char *root, double k, gm_fleet_format format, const gm_fleet_extras *x,
                    FILE *out);

#endif
