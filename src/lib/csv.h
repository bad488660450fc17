/* CSV (RFC 4180): output quotes fields only when they must be; input
 * splits a line with its quoting undone. */
#ifndef GM_CSV_H
#define GM_CSV_H

#include <stdio.h>

/* Writes one field, quoted (with doubled quotes) if it holds a comma,
 * quote, CR, LF or leading/trailing space. NULL writes an empty field. */
void gm_csv_field(FILE *f, const char *s);

/* Writes n fields and a newline. Returns 0, or -1 if the stream failed. */
int gm_csv_row(FILE *f, const char *const *fields, int n);

/* Splits one line (without its end of line) in place into at most max
 * fields, quotes undone. Returns the field count, or -1 for a malformed
 * line (an unterminated quote, text after a closing quote, more than max
 * fields). */
int gm_csv_split(char *s, char **out, int max);

/* Finds names[0..n) among header[0..n_header): cols[i] is the column of
 * names[i], or -1. Returns the index in names of the first name not found,
 * or -1 when every one is there. */
int gm_csv_find_columns(char *const *header, int n_header, const char *const *names, int *cols, int n);

/* gm_csv_find_columns where every name is required: returns 0, or -1 with
 * "FILE:1: not a gpumem KIND header (no column 'NAME')" in err, KIND being
 * path's file name up to its first dot (results, samples, devices). */
int gm_csv_require_columns(char *const *header, int n_header, const char *path, const char *const *names, int *cols,
                           int n, char *err, size_t err_len);

#endif
