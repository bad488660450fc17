/*
 * Internals shared by results.c and run_open.c: the point columns every
 * CSV starts with, and lines written whole.
 */
#ifndef GM_RESULTS_IO_H
#define GM_RESULTS_IO_H

#include <stddef.h>

extern const char *const gm_point_columns[];
extern const int gm_n_point_columns;

/* Writes all of buf to fd in one write(2); a short write is an error
 * (errno ENOSPC when the OS gave none). Returns 0 or -1 with errno. */
int gm_write_whole(int fd, const char *buf, size_t len);

/* Formats n fields as one CSV line (with its newline) into a malloc'd
 * buffer; returns it with *len, or NULL. */
char *gm_csv_line(const char *const *fields, int n, size_t *len);

#endif
