/*
 * A run: the folder results/<run-id>/ (or --out) with results.csv (one
 * measurement a row), samples.csv (every repetition) and meta.json.
 * Every line reaches its file in one write(2) on an O_APPEND descriptor
 * and is fsync'd before gm_run_write returns, so a row is on disk before
 * the next point starts and a killed process leaves only whole lines; a
 * write the OS cuts short (full disk, file-size limit) is cut back off. The schema is documented in
 * docs/results.md; bump GM_SCHEMA_VERSION with any change to it.
 */
#ifndef GM_RESULTS_H
#define GM_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define GM_SCHEMA_VERSION 4

/* The note of every row of a training point (--mode train): what the
 * device does not compute. Schema 3 and older had no `mode` column: such
 * a run's rows are training rows when a row carries this note. */
#define GM_TRAIN_NOTE "backward not computed: gradients synthetic"

/* The note of a point whose timed rep launched its kernel N > 1 times back
 * to back (the stream suite's short kernels), after the count: "8" GM_LAUNCHES_NOTE.
 * A rep of one short launch includes the launch's fixed cost on the
 * device, which back-to-back launches share out; `compare` does not
 * compare the two (gm_point_note_launches). */
#define GM_LAUNCHES_NOTE " launches back to back a rep; time is one launch's"

typedef enum {
    GM_ROW_OK,
    GM_ROW_OOM,          /* the point did not fit */
    GM_ROW_UNSUPPORTED,  /* the backend/device cannot run it */
    GM_ROW_SKIPPED,      /* not attempted, with the reason in note */
    GM_ROW_MISMATCH,     /* the output was wrong: no value is reported */
    GM_ROW_CRASH,        /* the worker died on this point */
    GM_ROW_TIMEOUT,      /* the worker overran the watchdog */
    GM_ROW_ERROR,        /* any other failure */
} gm_row_status;

const char *gm_row_status_name(gm_row_status s);

/* One metric measured at one point. Strings may be NULL (empty field);
 * batch/seq_len/bytes of 0 are written as empty fields. */
typedef struct {
    const char *suite, *workload, *variant, *pattern, *precision;
    /* Each tensor role's precision (workloads and oom rows; NULL: empty,
     * the same as precision). */
    const char *weight_precision, *kv_precision, *activation_precision;
    /* The whole model whose shape the point has (--model PRESET or
     * config.json; NULL otherwise), and the point's mode, "inference" or
     * "train" (workloads rows and the oom suite's searches; NULL
     * elsewhere). The mode is part of the point's key. */
    const char *model, *mode;
    uint64_t batch, seq_len, bytes;
    uint64_t model_bytes;    /* device bytes the memory model predicts (0: none) */
    uint64_t measured_bytes; /* device bytes the backend saw taken (0: unknown) */
    const char *metric, *unit;
    gm_row_status status;
    bool has_value;          /* value/min/max/stdev are meaningful */
    double value, min, max, stdev;
    size_t reps;
    const char *note;        /* reason for a non-ok status, or detail */
} gm_row;

typedef struct {
    char dir[4096];
    char run_id[128];
    char backend[32];
    char device[160];
    char device_id[64];      /* the device's stable identity (gm_device_info.uuid) */
    int results_fd;          /* results.csv and samples.csv, O_APPEND: each */
    int samples_fd;          /* line reaches the file in one write(2) */
    off_t results_len;       /* their lengths after the last whole line */
    off_t samples_len;
    int lock_fd;             /* the folder's lock (run_lock.h) */
    int rows_written;
    int rows_by_status[GM_ROW_ERROR + 1];
    int round;               /* the round (gpumem bench --rounds) samples.csv
                              * lines are written under, from 1; 0 counts as 1 */
} gm_run;

/* gm_run_open/gm_run_reopen: the folder is refused (in use by another
 * gpumem, already holds a run, path too long), as opposed to -1, the OS
 * failed to create or write it. */
#define GM_RUN_REFUSED (-2)

/*
 * Creates the run folder: `out` if given (created if missing; it must not
 * already hold a results.csv), else results/<run-id>, and takes its lock
 * (refused, naming the holder, while another gpumem writes there). Opens both CSVs and
 * writes their headers. device_id is the device's stable identity (UUID,
 * PCI bus id or the backend's fallback), written on every row. On failure
 * returns -1 or GM_RUN_REFUSED with the reason in err.
 */
int gm_run_open(gm_run *run, const char *out, const char *backend, const char *device,
                const char *device_id, char *err, size_t err_len);

/*
 * Opens an existing run folder `dir` to continue it (gpumem bench
 * --resume): takes its lock, cuts results.csv and samples.csv back to the
 * given lengths (the end of the last finished point) and appends from
 * there; rows_written starts at `rows`. The run id is the folder's name.
 */
int gm_run_reopen(gm_run *run, const char *dir, const char *backend, const char *device, off_t results_len,
                  off_t samples_len, int rows, char *err, size_t err_len);

/* Cuts both CSVs back to the given lengths (an abandoned point's rows).
 * Returns 0 or -1 with errno. */
int gm_run_cut_back(gm_run *run, off_t results_len, off_t samples_len);

/* Appends a row and its raw samples (may be NULL/0) and makes them durable.
 * Returns 0, or -1 (with err) if the disk refused them. */
int gm_run_write(gm_run *run, const gm_row *row, const double *samples, size_t n_samples,
                 char *err, size_t err_len);

/* Appends only the raw samples of row (under run->round) and makes them
 * durable: a round before the last of gpumem bench --rounds, whose row is
 * written once, by the last round. Returns 0, or -1 with err. */
int gm_run_write_samples(gm_run *run, const gm_row *row, const double *samples, size_t n_samples,
                         char *err, size_t err_len);

/* Makes row an `ok` row of one measurement (reps 1, min = max = value),
 * with metric and unit. */
void gm_row_single(gm_row *row, const char *metric, const char *unit, double value);

/* Closes the files and lets go of the lock. Safe on a run that failed to open. */
void gm_run_close(gm_run *run);

/* mkdir -p: creates path and its missing parents. Returns 0 or -1 with
 * errno set. */
int gm_make_dirs(const char *path);

/* Writes path atomically (temp file + rename) with the bytes produced by
 * emit(f, ctx). Returns 0 or -1 with err. */
int gm_write_file_atomic(const char *path, void (*emit)(FILE *f, void *ctx), void *ctx,
                         char *err, size_t err_len);

#endif
