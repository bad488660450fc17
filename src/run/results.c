/* Rows of a run: formatting, durable appends, meta files written atomically. See results.h. */
#include "run/results.h"

#include "lib/csv.h"
#include "device/memtrace.h"
#include "run/results_io.h"
#include "run/run_lock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const status_names[] = {"ok",       "oom",   "unsupported", "skipped",
                                           "mismatch", "crash", "timeout",     "error"};

const char *gm_row_status_name(gm_row_status s)
{
    return s <= GM_ROW_ERROR ? status_names[s] : "error";
}

static void fmt_u64(char *buf, size_t len, uint64_t v)
{
    if (v)
        snprintf(buf, len, "%llu", (unsigned long long)v);
    else
        buf[0] = '\0';
}

static void fmt_double(char *buf, size_t len, bool has, double v)
{
    if (has)
        snprintf(buf, len, "%.15g", v);
    else
        buf[0] = '\0';
}

/* Fills the schema_version and point columns; returns the count. */
static int point_fields(const gm_run *run, const gm_row *r, const char **f, char num[5][24])
{
    fmt_u64(num[0], 24, r->batch);
    fmt_u64(num[1], 24, r->seq_len);
    fmt_u64(num[2], 24, r->bytes);
    fmt_u64(num[3], 24, r->model_bytes);
    fmt_u64(num[4], 24, r->measured_bytes);
    static char schema[8];
    snprintf(schema, sizeof schema, "%d", GM_SCHEMA_VERSION);
    int n = 0;
    f[n++] = schema;
    f[n++] = run->run_id;
    f[n++] = run->backend;
    f[n++] = run->device;
    f[n++] = run->device_id;
    f[n++] = r->suite;
    f[n++] = r->workload;
    f[n++] = r->variant;
    f[n++] = r->pattern;
    f[n++] = r->precision;
    f[n++] = r->weight_precision;
    f[n++] = r->kv_precision;
    f[n++] = r->activation_precision;
    f[n++] = r->model;
    f[n++] = r->mode;
    f[n++] = num[0];
    f[n++] = num[1];
    f[n++] = num[2];
    f[n++] = num[3];
    f[n++] = num[4];
    return n;
}

/* Appends one whole line to fd at *len (the file's length). A write the
 * OS cuts short is undone (the file is cut back to *len), so the file
 * never ends in part of a line. Returns 0 or -1 with errno. */
static int append_line(int fd, off_t *len, const char *const *fields, int n)
{
    size_t line_len = 0;
    char *line = gm_csv_line(fields, n, &line_len);
    if (!line)
        return -1;
    int rc = gm_write_whole(fd, line, line_len);
    int saved = errno;
    free(line);
    if (rc != 0) {
        if (ftruncate(fd, *len) != 0) {
            /* The error to report is the write's. */
        }
        errno = saved;
        return -1;
    }
    *len += (off_t)line_len;
    return 0;
}

/* Appends the samples lines of row r (point columns from f[0..base)). */
static int append_samples(gm_run *run, const gm_row *r, const char **f, int base, const double *samples,
                          size_t n_samples, char *err, size_t err_len)
{
    const char *sf[32];
    memcpy(sf, f, (size_t)base * sizeof *sf);
    char round[24];
    snprintf(round, sizeof round, "%d", run->round > 0 ? run->round : 1);
    int bad = 0;
    for (size_t i = 0; i < n_samples && !bad; i++) {
        char rep[24], v[32];
        snprintf(rep, sizeof rep, "%zu", i);
        snprintf(v, sizeof v, "%.9g", samples[i]);
        sf[base] = r->metric;
        sf[base + 1] = r->unit;
        sf[base + 2] = rep;
        sf[base + 3] = v;
        sf[base + 4] = round;
        bad = append_line(run->samples_fd, &run->samples_len, sf, base + 5) != 0;
    }
    if (bad || (n_samples && fsync(run->samples_fd) != 0)) {
        snprintf(err, err_len, "cannot write %s/samples.csv: %s", run->dir, strerror(errno));
        return -1;
    }
    return 0;
}

int gm_run_write_samples(gm_run *run, const gm_row *r, const double *samples, size_t n_samples,
                         char *err, size_t err_len)
{
    const char *f[32];
    char num[5][24];
    int base = point_fields(run, r, f, num);
    return append_samples(run, r, f, base, samples, n_samples, err, err_len);
}

int gm_run_write(gm_run *run, const gm_row *r, const double *samples, size_t n_samples,
                 char *err, size_t err_len)
{
    const char *f[32];
    char num[5][24], val[4][32], reps[24];
    int n = point_fields(run, r, f, num);
    int base = n;
    fmt_double(val[0], 32, r->has_value, r->value);
    fmt_double(val[1], 32, r->has_value, r->min);
    fmt_double(val[2], 32, r->has_value, r->max);
    fmt_double(val[3], 32, r->has_value, r->stdev);
    snprintf(reps, sizeof reps, "%zu", r->reps);
    f[n++] = r->metric;
    f[n++] = r->unit;
    f[n++] = val[0];
    f[n++] = val[1];
    f[n++] = val[2];
    f[n++] = val[3];
    f[n++] = reps;
    f[n++] = gm_row_status_name(r->status);
    f[n++] = r->note;
    /* Samples first: a row in results.csv implies its samples are there. */
    if (append_samples(run, r, f, base, samples, n_samples, err, err_len) != 0)
        return -1;
    if (append_line(run->results_fd, &run->results_len, f, n) != 0 || fsync(run->results_fd) != 0) {
        snprintf(err, err_len, "cannot write %s/results.csv: %s", run->dir, strerror(errno));
        return -1;
    }
    run->rows_written++;
    run->rows_by_status[r->status <= GM_ROW_ERROR ? r->status : GM_ROW_ERROR]++;
    return 0;
}

void gm_run_close(gm_run *run)
{
    gm_memtrace_stop();
    if (run->results_fd >= 0)
        close(run->results_fd);
    if (run->samples_fd >= 0)
        close(run->samples_fd);
    run->results_fd = run->samples_fd = -1;
    gm_run_unlock(run->dir, run->lock_fd);
    run->lock_fd = -1;
}

int gm_write_file_atomic(const char *path, void (*emit)(FILE *f, void *ctx), void *ctx,
                         char *err, size_t err_len)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, err_len, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    emit(f, ctx);
    int bad = ferror(f) != 0 || fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

void gm_row_single(gm_row *row, const char *metric, const char *unit, double value)
{
    row->metric = metric;
    row->unit = unit;
    row->status = GM_ROW_OK;
    row->has_value = true;
    row->value = row->min = row->max = value;
    row->stdev = 0;
    row->reps = 1;
}
