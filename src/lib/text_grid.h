/*
 * A table of text cells built row by row and printed aligned for a
 * terminal (columns padded, two spaces apart) or as Markdown (a header
 * rule after the first row). Cells hold GM_GRID_CELL - 1 bytes; longer
 * text is cut.
 */
#ifndef GM_TEXT_GRID_H
#define GM_TEXT_GRID_H

#include <stdio.h>

#define GM_GRID_CELL 160
#define GM_GRID_MAX_COLS 64

typedef struct {
    char **cells;
    int rows, cols, cap;
} gm_grid;

/* An empty grid of `cols` columns (1 to GM_GRID_MAX_COLS). Returns 0, or -1. */
int gm_grid_init(gm_grid *g, int cols);
/* Appends a row of empty cells. Returns its index, or -1 out of memory. */
int gm_grid_add_row(gm_grid *g);
/* The cell at row, col (writable, GM_GRID_CELL bytes). */
char *gm_grid_cell(const gm_grid *g, int row, int col);
/* Formats into a cell. */
void gm_grid_set(gm_grid *g, int row, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Whether row heads a group: a row after the first whose cells but the
 * first are empty. It spans the table: printed alone on its line (bold in
 * Markdown), its text not widening the first column. */
int gm_grid_heading(const gm_grid *g, int row);
/* Prints the grid aligned (markdown 0) or as a Markdown table (1); in
 * Markdown a '|' in a cell is escaped. */
void gm_grid_print(FILE *f, const gm_grid *g, int markdown);
void gm_grid_free(gm_grid *g);

#endif
