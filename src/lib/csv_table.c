#include "lib/csv_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GM_CSV_MAX_COLUMNS 128

int gm_csv_table_load(const char *path, gm_csv_table *t, char *err, size_t len)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, len, "cannot read %s", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got = getline(&line, &cap, f);
    int rc = 0, lineno = 1, alloc = 0;
    if (got <= 0 || line[got - 1] != '\n') {
        snprintf(err, len, "%s:1: %s", path, got <= 0 ? "empty (no header)" : "truncated header (no end of line)");
        rc = -1;
    } else {
        line[strcspn(line, "\r\n")] = '\0';
        t->header_line = strdup(line);
        t->header = calloc(GM_CSV_MAX_COLUMNS, sizeof *t->header);
        if (!t->header_line || !t->header) {
            snprintf(err, len, "out of memory");
            rc = -1;
        } else if ((t->n_cols = gm_csv_split(t->header_line, t->header, GM_CSV_MAX_COLUMNS)) < 0) {
            snprintf(err, len, "%s:1: malformed header", path);
            rc = -1;
        }
    }
    while (rc == 0 && (got = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[got - 1] != '\n') {
            snprintf(err, len, "%s:%d: truncated line (no end of line)", path, lineno);
            rc = -1;
            break;
        }
        line[strcspn(line, "\r\n")] = '\0';
        if (t->n_rows == alloc) {
            alloc = alloc ? 2 * alloc : 256;
            char **l = realloc(t->lines, (size_t)alloc * sizeof *l);
            if (l)
                t->lines = l;
            char ***fl = realloc(t->fields, (size_t)alloc * sizeof *fl);
            if (fl)
                t->fields = fl;
            if (!l || !fl) {
                snprintf(err, len, "out of memory");
                rc = -1;
                break;
            }
        }
        char *copy = strdup(line), **row = calloc((size_t)t->n_cols + 1, sizeof *row);
        if (!copy || !row || gm_csv_split(copy, row, t->n_cols + 1) != t->n_cols) {
            free(copy);
            free(row);
            snprintf(err, len, "%s:%d: malformed row (expected %d fields)", path, lineno, t->n_cols);
            rc = -1;
            break;
        }
        t->lines[t->n_rows] = copy;
        t->fields[t->n_rows++] = row;
    }
    free(line);
    fclose(f);
    if (rc != 0)
        gm_csv_table_free(t);
    return rc;
}

void gm_csv_table_free(gm_csv_table *t)
{
    for (int i = 0; i < t->n_rows; i++) {
        free(t->lines[i]);
        free(t->fields[i]);
    }
    free(t->lines);
    free(t->fields);
    free(t->header);
    free(t->header_line);
    memset(t, 0, sizeof *t);
}

int gm_csv_table_column(const gm_csv_table *t, const char *name)
{
    for (int i = 0; i < t->n_cols; i++)
        if (strcmp(t->header[i], name) == 0)
            return i;
    return -1;
}

int gm_csv_table_columns(const gm_csv_table *t, const char *path, const char *const *names, int *cols, int n,
                         char *err, size_t len)
{
    return gm_csv_require_columns(t->header, t->n_cols, path, names, cols, n, err, len);
}
