/*
 * Reading a CSV file (RFC 4180, as gpumem writes them) into memory: the
 * header's names and every data row split into fields. Columns are found
 * by name, so files with extra or reordered columns read the same.
 * Errors name the file and line ("FILE:LINE: why").
 */
#ifndef GM_CSV_TABLE_H
#define GM_CSV_TABLE_H

#include "lib/csv.h"

#include <stddef.h>

typedef struct {
    char *header_line;            /* the header, split in place */
    char **header;                /* header[column] */
    char **lines;                 /* every data line, split in place */
    char ***fields;               /* fields[row][column] */
    int n_rows, n_cols;
} gm_csv_table;

/* Lines are split with gm_csv_split (csv.h). */

/* Reads `path`: a header line, then rows with as many fields as it has.
 * A line without its end-of-line (a cut file) or with another field count
 * is an error. Returns 0, or -1 with "FILE:LINE: why" in err. */
int gm_csv_table_load(const char *path, gm_csv_table *t, char *err, size_t len);
void gm_csv_table_free(gm_csv_table *t);

/* The index of the column called `name`, or -1. */
int gm_csv_table_column(const gm_csv_table *t, const char *name);

/* gm_csv_require_columns (csv.h) on t's header. */
int gm_csv_table_columns(const gm_csv_table *t, const char *path, const char *const *names, int *cols, int n,
                         char *err, size_t len);

#endif
