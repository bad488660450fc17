/*
 * The key of a measured point: the columns of results.csv and samples.csv
 * that name it, suite..bytes and then the metric. `compare` joins runs on
 * it and `fleet` merges GPUs on it; both name a point to people with
 * gm_point_label.
 */
#ifndef GM_POINT_KEY_H
#define GM_POINT_KEY_H

#include <stddef.h>

#define GM_POINT_KEY_FIELDS 9
#define GM_POINT_KEY_SEP '\x1f'    /* never in a field gpumem writes */

/* suite, workload, variant, pattern, precision, batch, seq_len, bytes, metric. */
extern const char *const gm_point_key_columns[GM_POINT_KEY_FIELDS];

/* Writes the GM_POINT_KEY_FIELDS fields of key, each followed by
 * GM_POINT_KEY_SEP, into out: one string, equal exactly for equal keys.
 * Returns 0, or -1 when it does not fit in len. */
int gm_point_key_join(const char *const *key, char *out, size_t len);

/* A point's name for people from key[0..7] (suite..bytes): the non-empty
 * fields of suite..precision, "batch N", "seq N" and the size in binary
 * units (a soak check's bytes as written: they count bytes moved). */
void gm_point_label(const char *const *key, char *out, size_t len);

#endif
