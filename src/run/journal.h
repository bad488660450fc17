/*
 * The point journal of a bench run: <dir>/points.journal. Its first line
 * names the schema and suite version and the lengths of results.csv and
 * samples.csv holding only their headers; then one line per finished
 * point, appended (one write(2), fsync'd) only after all of the point's
 * rows are durable:
 *     gpumem-journal 1 <schema> <results_len> <samples_len> <suite_version>
 *     point <index> <results_len> <samples_len> <rows>
 *     end <status>            (every point was attempted)
 * A point is finished exactly when its line is whole, so `--resume` cuts
 * both CSVs back to the last such line's lengths and starts at the next
 * index: no point is lost and none is written twice.
 *
 * <dir>/command holds the bench arguments the run was started with
 * (each NUL-terminated), which --resume plans the same points from.
 */
#ifndef GM_JOURNAL_H
#define GM_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct gm_journal_state {
    int points;              /* finished points: the next index to run */
    off_t results_len;       /* the CSVs' lengths after the last of them */
    off_t samples_len;
    int rows;                /* rows in results.csv up to there */
    bool ended;              /* an `end` line: nothing left to run */
    char end_status[48];
} gm_journal_state;

/* Creates the journal (refusing an existing one) with its first line.
 * Returns its fd or -1 with err. */
int gm_journal_create(const char *dir, off_t results_len, off_t samples_len, char *err, size_t err_len);

/* Reads dir's journal. Returns its fd open for appending with *st filled,
 * or -1 with err: no journal (not a bench run), another schema or suite
 * version, or a corrupt line. A last line without its newline is a point
 * that did not finish and is ignored. */
int gm_journal_open(const char *dir, gm_journal_state *st, char *err, size_t err_len);

/* Appends a point's line or the end line; returns 0 or -1 with errno. */
int gm_journal_point(int fd, int index, off_t results_len, off_t samples_len, int rows);
int gm_journal_end(int fd, const char *status);

/* Writes <dir>/command (args, each NUL-terminated); reads it back as a
 * malloc'd argv (NULL-terminated; gm_journal_free_args frees it). */
int gm_journal_save_args(const char *dir, int argc, char **argv, char *err, size_t err_len);
char **gm_journal_load_args(const char *dir, int *argc, char *err, size_t err_len);
void gm_journal_free_args(char **argv);

#endif
