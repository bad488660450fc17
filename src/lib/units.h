/*
 * Parsing of user-facing quantities. Every parser returns 0 on success, or
 * -1 with a one-line reason in err (naming the value and what is allowed).
 */
#ifndef GM_UNITS_H
#define GM_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define GM_MAX_RANGE_POINTS 4096   /* a range with more points is refused */

/* "4096", "4KiB", "64MiB", "1.5GiB" (binary); "4KB", "1GB" (decimal);
 * "K", "M", "G", "T", "P", "E" alone are binary (up to EiB). Refuses
 * negatives and anything from 2^63 bytes up. */
int gm_parse_size(const char *s, uint64_t *out, char *err, size_t err_len);

/* A memory budget as reports print it: a size whose unit is required
 * ("24GiB", "78.7GiB", "512MB", "4096B"), a fraction of a byte rounded
 * down; a bare number is refused. Otherwise as gm_parse_size. */
int gm_parse_budget(const char *s, uint64_t *out, char *err, size_t err_len);

/* A non-negative decimal integer no larger than max. */
int gm_parse_uint(const char *s, uint64_t max, uint64_t *out, char *err, size_t err_len);

/* A share: "90%" or "0.9" -> 0.9; must lie in (0, 1]. */
int gm_parse_share(const char *s, double *out, char *err, size_t err_len);

/*
 * A range of sizes (sizes != 0) or counts: "a:b:xK" (a, a*K, ... <= b),
 * "a:b:+K" (a, a+K, ... <= b), "a,b,c" (a list of single values), or one
 * value. Results are ascending for ranges, in order given for lists.
 * *out is malloc'd (caller frees) with *n values, at most
 * GM_MAX_RANGE_POINTS.
 */
int gm_parse_range(const char *s, int sizes, uint64_t **out, size_t *n, char *err, size_t err_len);

/* Formats bytes the short way: "64MiB", "1.5GiB", "4096B". */
const char *gm_format_size(uint64_t bytes, char *buf, size_t len);

#endif
