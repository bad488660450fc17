/*
 * The key of a measured point: the columns of results.csv and samples.csv
 * that name it, suite..bytes (the mode among them) and then the metric. `compare` joins runs on
 * it and `fleet` merges GPUs on it; both name a point to people with
 * gm_point_label. bench --rounds pools each point's samples under it
 * (bench/rounds.c).
 */
#ifndef GM_POINT_KEY_H
#define GM_POINT_KEY_H

#include <stdbool.h>
#include <stddef.h>

#define GM_POINT_KEY_FIELDS 10
#define GM_POINT_KEY_SEP '\x1f'    /* never in a field gpumem writes */
#define GM_POINT_KEY_MODE 5        /* the index of `mode` */

/* suite, workload, variant, pattern, precision, mode, batch, seq_len, bytes, metric. */
extern const char *const gm_point_key_columns[GM_POINT_KEY_FIELDS];

/* gm_csv_require_columns (lib/csv.h) for names[0..n), whose first
 * GM_POINT_KEY_FIELDS are gm_point_key_columns, except that `mode` may be
 * missing: a run of schema 3 or older has none, and cols[GM_POINT_KEY_MODE]
 * is then -1 (gm_point_key_mode gives the field). */
int gm_point_key_require(char *const *header, int n_header, const char *path, const char *const *names, int *cols,
                         int n, char *err, size_t len);

/* Does a row's note say it is of a training point (run/results.h,
 * GM_TRAIN_NOTE)? A run of schema 3 or older ran one mode: train when any
 * of its rows says so. */
bool gm_point_note_train(const char *note);
/* The same over a whole results.csv at path: does any line carry the note? */
bool gm_point_file_train(const char *path);

/* The launches a rep of the row's point made: the count its note gives
 * before GM_LAUNCHES_NOTE (run/results.h), else 1. */
unsigned gm_point_note_launches(const char *note);

/* The mode field of a row: row[col], or for a run without the column
 * (col -1) what the row had: `train` or `inference` (train_run) on the rows
 * of the workloads suite and of the oom suite's searches, empty on others. */
const char *gm_point_key_mode(char *const *row, int col, int suite_col, int workload_col, bool train_run);

/* Writes the GM_POINT_KEY_FIELDS fields of key, each followed by
 * GM_POINT_KEY_SEP, into out: one string, equal exactly for equal keys.
 * Returns 0, or -1 when it does not fit in len. */
int gm_point_key_join(const char *const *key, char *out, size_t len);

/* What a point's variant stands for when two cards are compared (compare
 * --cards): the stream suite's access pattern is each device's own choice
 * (""), a linear layer runs our kernel ("ours": tiled on a GPU, blocked on
 * a CPU) or the vendor's GEMM ("vendor": any other implementation); any
 * other variant stands for itself. Returns a static string or variant. */
const char *gm_point_card_role(const char *suite, const char *workload, const char *variant);

/* A point's name for people from key[0..8] (suite..bytes): the non-empty
 * fields of suite..precision, the mode unless it is inference, "batch N",
 * "seq N" and the size in binary units (a soak check's bytes as written:
 * they count bytes moved). */
void gm_point_label(const char *const *key, char *out, size_t len);

#endif
