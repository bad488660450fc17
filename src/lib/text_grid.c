/* A table of text cells (text_grid.h). */
#include "lib/text_grid.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int gm_grid_init(gm_grid *g, int cols)
{
    memset(g, 0, sizeof *g);
    if (cols < 1 || cols > GM_GRID_MAX_COLS)
        return -1;
    g->cols = cols;
    return 0;
}

char *gm_grid_cell(const gm_grid *g, int row, int col)
{
    return g->cells[row * g->cols + col];
}

int gm_grid_add_row(gm_grid *g)
{
    if (g->rows == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        char **c = realloc(g->cells, (size_t)cap * (size_t)g->cols * sizeof *c);
        if (!c)
            return -1;
        g->cells = c;
        g->cap = cap;
    }
    char **row = &g->cells[g->rows * g->cols];
    for (int j = 0; j < g->cols; j++)
        row[j] = NULL;
    g->rows++;                 /* freed whole by gm_grid_free, even half made */
    for (int j = 0; j < g->cols; j++)
        if (!(row[j] = calloc(1, GM_GRID_CELL)))
            return -1;
    return g->rows - 1;
}

void gm_grid_set(gm_grid *g, int row, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(gm_grid_cell(g, row, col), GM_GRID_CELL, fmt, ap);
    va_end(ap);
}

static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++)
        *s == '|' ? fputs("\\|", f) : fputc(*s, f);
}

int gm_grid_heading(const gm_grid *g, int row)
{
    for (int j = 1; j < g->cols; j++)
        if (gm_grid_cell(g, row, j)[0])
            return 0;
    return row > 0 && g->cols > 1;
}

void gm_grid_print(FILE *f, const gm_grid *g, int markdown)
{
    int width[GM_GRID_MAX_COLS] = {0};
    for (int i = 0; i < g->rows; i++)
        for (int j = 0; j < g->cols && !gm_grid_heading(g, i); j++)
            if ((int)strlen(gm_grid_cell(g, i, j)) > width[j])
                width[j] = (int)strlen(gm_grid_cell(g, i, j));
    for (int i = 0; i < g->rows; i++) {
        if (gm_grid_heading(g, i)) {
            fprintf(f, markdown ? "| **%s** " : "%s\n", gm_grid_cell(g, i, 0));
            for (int j = 1; j < g->cols && markdown; j++)
                fputs("| ", f);
            fputs(markdown ? "|\n" : "", f);
            continue;
        }
        for (int j = 0; j < g->cols; j++)
            if (markdown) {
                fputs("| ", f);
                md_cell(f, gm_grid_cell(g, i, j));
                fputc(' ', f);
            } else {
                fprintf(f, "%s%-*s", j ? "  " : "", j == g->cols - 1 ? 0 : width[j], gm_grid_cell(g, i, j));
            }
        fputs(markdown ? "|\n" : "\n", f);
        if (markdown && i == 0) {
            for (int j = 0; j < g->cols; j++)
                fputs("| --- ", f);
            fputs("|\n", f);
        }
    }
}

void gm_grid_free(gm_grid *g)
{
    for (int i = 0; i < g->rows * g->cols; i++)
        free(g->cells[i]);
    free(g->cells);
    memset(g, 0, sizeof *g);
}
