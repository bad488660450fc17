#include "results.h"

#include "csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const status_names[] = {"ok",       "oom",   "unsupported", "skipped",
                                           "mismatch", "crash", "timeout",     "error"};

const char *gm_row_status_name(gm_row_status s)
{
    return s <= GM_ROW_ERROR ? status_names[s] : "error";
}

static const char *const point_columns[] = {"run_id",  "backend",   "device",  "device_id", "suite",
                                            "workload", "variant",  "pattern", "precision",
                                            "batch",   "seq_len",   "bytes",   "model_bytes",
                                            "measured_bytes"};
#define N_POINT_COLUMNS (int)(sizeof point_columns / sizeof point_columns[0])

int gm_make_dirs(const char *path)
{
    char buf[4096];
    if (strlen(path) >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(buf, path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

static void slug(const char *in, char *out, size_t len)
{
    size_t j = 0;
    for (; *in && j + 1 < len && j < 40; in++) {
        char c = *in;
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            out[j++] = c;
        else if (c >= 'A' && c <= 'Z')
            out[j++] = (char)(c - 'A' + 'a');
        else if (j && out[j - 1] != '-')
            out[j++] = '-';
    }
    while (j && out[j - 1] == '-')
        j--;
    out[j] = '\0';
}

static FILE *open_csv(gm_run *run, const char *name, const char *const *extra, int n_extra,
                      char *err, size_t err_len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", run->dir, name);
    FILE *f = fopen(path, "wx");
    if (!f) {
        snprintf(err, err_len, "cannot create %s: %s", path, strerror(errno));
        return NULL;
    }
    const char *header[32];
    int n = 0;
    header[n++] = "schema_version";
    for (int i = 0; i < N_POINT_COLUMNS; i++)
        header[n++] = point_columns[i];
    for (int i = 0; i < n_extra; i++)
        header[n++] = extra[i];
    if (gm_csv_row(f, header, n) != 0 || fflush(f) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        fclose(f);
        return NULL;
    }
    return f;
}

int gm_run_open(gm_run *run, const char *out, const char *backend, const char *device,
                const char *device_id, char *err, size_t err_len)
{
    memset(run, 0, sizeof *run);
    snprintf(run->backend, sizeof run->backend, "%s", backend);
    snprintf(run->device, sizeof run->device, "%s", device);
    snprintf(run->device_id, sizeof run->device_id, "%s", device_id ? device_id : "");
    char stamp[32], dev_slug[48];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    slug(device, dev_slug, sizeof dev_slug);
    snprintf(run->run_id, sizeof run->run_id, "%s-%s-%s", stamp, backend, dev_slug);
    if (out) {
        if (strlen(out) >= sizeof run->dir - 64) {
            snprintf(err, err_len, "--out path is too long");
            return -1;
        }
        snprintf(run->dir, sizeof run->dir, "%s", out);
        if (gm_make_dirs(run->dir) != 0) {
            snprintf(err, err_len, "cannot create output folder %s: %s", run->dir, strerror(errno));
            return -1;
        }
        const char *base = strrchr(out, '/');
        base = base && base[1] ? base + 1 : out;
        snprintf(run->run_id, sizeof run->run_id, "%.120s", base);
    } else {
        if (gm_make_dirs("results") != 0) {
            snprintf(err, err_len, "cannot create results/: %s", strerror(errno));
            return -1;
        }
        /* A second run in the same second gets a suffix. */
        char base[128];
        snprintf(base, sizeof base, "%s", run->run_id);
        for (int k = 1;; k++) {
            snprintf(run->dir, sizeof run->dir, "results/%s", run->run_id);
            if (mkdir(run->dir, 0777) == 0)
                break;
            if (errno != EEXIST || k > 99) {
                snprintf(err, err_len, "cannot create %s: %s", run->dir, strerror(errno));
                return -1;
            }
            snprintf(run->run_id, sizeof run->run_id, "%.100s-%d", base, k + 1);
        }
    }
    if (access(run->dir, W_OK) != 0) {
        snprintf(err, err_len, "output folder %s is not writable: %s", run->dir, strerror(errno));
        return -1;
    }
    static const char *const result_cols[] = {"metric", "unit",  "value", "min",  "max",
                                              "stdev",  "reps",  "status", "note"};
    static const char *const sample_cols[] = {"metric", "unit", "rep", "value"};
    run->results = open_csv(run, "results.csv", result_cols, 9, err, err_len);
    if (!run->results)
        return -1;
    run->samples = open_csv(run, "samples.csv", sample_cols, 4, err, err_len);
    if (!run->samples) {
        fclose(run->results);
        run->results = NULL;
        return -1;
    }
    return 0;
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
    f[n++] = num[0];
    f[n++] = num[1];
    f[n++] = num[2];
    f[n++] = num[3];
    f[n++] = num[4];
    return n;
}

static int make_durable(FILE *f)
{
    return (fflush(f) == 0 && fsync(fileno(f)) == 0) ? 0 : -1;
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
    const char *sf[32];
    memcpy(sf, f, (size_t)base * sizeof *sf);
    for (size_t i = 0; i < n_samples; i++) {
        char rep[24], v[32];
        snprintf(rep, sizeof rep, "%zu", i);
        snprintf(v, sizeof v, "%.9g", samples[i]);
        sf[base] = r->metric;
        sf[base + 1] = r->unit;
        sf[base + 2] = rep;
        sf[base + 3] = v;
        if (gm_csv_row(run->samples, sf, base + 4) != 0)
            break;
    }
    if (n_samples && make_durable(run->samples) != 0) {
        snprintf(err, err_len, "cannot write %s/samples.csv: %s", run->dir, strerror(errno));
        return -1;
    }
    if (gm_csv_row(run->results, f, n) != 0 || make_durable(run->results) != 0) {
        snprintf(err, err_len, "cannot write %s/results.csv: %s", run->dir, strerror(errno));
        return -1;
    }
    run->rows_written++;
    run->rows_by_status[r->status <= GM_ROW_ERROR ? r->status : GM_ROW_ERROR]++;
    return 0;
}

void gm_run_close(gm_run *run)
{
    if (run->results)
        fclose(run->results);
    if (run->samples)
        fclose(run->samples);
    run->results = run->samples = NULL;
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
