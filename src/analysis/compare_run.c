/* Reading a run folder for gpumem compare (src/compare.h), and the table
 * of which way each metric gets worse. */
#include "analysis/compare.h"
#include "lib/json.h"
#include "analysis/metric_direction.h"
#include "analysis/point_key.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The columns that make a point's key (point_key.h): cols[0..N_KEY). */
#define N_KEY GM_POINT_KEY_FIELDS

/* The point key of a row (gm_point_key_join), malloc'd; NULL when out of
 * memory. */
static char *make_key(char **row, const int *cols)
{
    const char *fields[N_KEY];
    size_t len = 1;
    for (int i = 0; i < N_KEY; i++)
        len += strlen(fields[i] = row[cols[i]]) + 1;
    char *key = malloc(len);
    if (key && gm_point_key_join(fields, key, len) != 0) {
        free(key);
        key = NULL;
    }
    return key;
}

static int by_key(const void *a, const void *b)
{
    const gm_cmp_point *p = *(gm_cmp_point *const *)a, *q = *(gm_cmp_point *const *)b;
    return strcmp(p->key, q->key);
}

gm_cmp_point *gm_cmp_run_find(const gm_cmp_run *r, const char *key)
{
    size_t lo = 0, hi = (size_t)r->n_points;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(r->sorted[mid]->key, key);
        if (c == 0) {
            while (mid > 0 && strcmp(r->sorted[mid - 1]->key, key) == 0)
                mid--;                         /* the first of repeated keys */
            return r->sorted[mid];
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Parses a number field; empty is allowed where `optional`. */
static int number(const char *s, int optional, double *out)
{
    if (!*s) {
        *out = 0;
        return optional ? 0 : -1;
    }
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return *end || errno == ERANGE ? -1 : 0;
}

static int load_results(gm_cmp_run *r, const char *path, char *err, size_t len)
{
    if (gm_csv_table_load(path, &r->results, err, len) != 0)
        return -1;
    int cols[N_KEY + 5];
    const char *names[N_KEY + 5];
    memcpy(names, gm_point_key_columns, sizeof gm_point_key_columns);
    names[N_KEY] = "unit", names[N_KEY + 1] = "value", names[N_KEY + 2] = "status", names[N_KEY + 3] = "note",
    names[N_KEY + 4] = "reps";
    if (gm_csv_table_columns(&r->results, path, names, cols, N_KEY + 5, err, len) != 0)
        return -1;
    const gm_csv_table *t = &r->results;
    int model_col = gm_csv_table_column(t, "model_bytes");
    r->points = calloc((size_t)t->n_rows + 1, sizeof *r->points);
    r->sorted = calloc((size_t)t->n_rows + 1, sizeof *r->sorted);
    if (!r->points || !r->sorted) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    for (int i = 0; i < t->n_rows; i++) {
        char **row = t->fields[i];
        gm_cmp_point *p = &r->points[r->n_points];
        const char **f[] = {&p->suite, &p->workload, &p->variant, &p->pattern, &p->precision, &p->batch,
                            &p->seq_len, &p->bytes, &p->metric, &p->unit, NULL, &p->status, &p->note};
        for (int c = 0; c < N_KEY + 4; c++)
            if (f[c])
                *f[c] = row[cols[c]];
        p->model_bytes = model_col >= 0 ? row[model_col] : "";
        double reps;
        int ok = strcmp(p->status, "ok") == 0;
        const char *value = row[cols[N_KEY + 1]], *reps_text = row[cols[N_KEY + 4]];
        int bad_value = number(value, !ok, &p->value) != 0;
        if (bad_value || number(reps_text, 1, &reps) != 0) {
            snprintf(err, len, "%s:%d: %s '%s' is not a number", path, i + 2, bad_value ? "value" : "reps",
                     bad_value ? value : reps_text);
            return -1;
        }
        p->reps = (int)reps;
        if (!(p->key = make_key(row, cols))) {
            snprintf(err, len, "out of memory");
            return -1;
        }
        r->sorted[r->n_points++] = p;
    }
    qsort(r->sorted, (size_t)r->n_points, sizeof *r->sorted, by_key);
    for (int i = 1; i < r->n_points; i++)
        if (strcmp(r->sorted[i]->key, r->sorted[i - 1]->key) == 0)
            r->sorted[i]->repeated = r->sorted[i - 1]->repeated = 1;
    return 0;
}

static int load_samples(gm_cmp_run *r, const char *path, char *err, size_t len)
{
    gm_csv_table t;
    if (gm_csv_table_load(path, &t, err, len) != 0)
        return -1;
    int cols[N_KEY + 1];
    const char *names[N_KEY + 1];
    memcpy(names, gm_point_key_columns, sizeof gm_point_key_columns);
    names[N_KEY] = "value";
    int rc = gm_csv_table_columns(&t, path, names, cols, N_KEY + 1, err, len);
    for (int i = 0; rc == 0 && i < t.n_rows; i++) {
        double v;
        if (number(t.fields[i][cols[N_KEY]], 0, &v) != 0) {
            snprintf(err, len, "%s:%d: value '%s' is not a number", path, i + 2, t.fields[i][cols[N_KEY]]);
            rc = -1;
            break;
        }
        char *key = make_key(t.fields[i], cols);
        gm_cmp_point *p = key ? gm_cmp_run_find(r, key) : NULL;
        free(key);
        if (!p)
            continue;                 /* samples of a row the run did not finish: nothing to join */
        if (p->n_samples == p->cap_samples) {
            size_t cap = p->cap_samples ? 2 * p->cap_samples : 16;
            double *s = realloc(p->samples, cap * sizeof *s);
            if (!s) {
                snprintf(err, len, "out of memory");
                rc = -1;
                break;
            }
            p->samples = s;
            p->cap_samples = cap;
        }
        p->samples[p->n_samples++] = v;
    }
    gm_csv_table_free(&t);
    return rc;
}

static void meta_fact(const json_t *json, const char *path, char *out, size_t len)
{
    const char *v = gm_json_str(json, path);
    snprintf(out, len, "%s", v ? v : "?");
}

int gm_cmp_run_load(const char *dir, gm_cmp_run *r, char *err, size_t len)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    size_t n = strlen(r->dir);
    while (n > 1 && r->dir[n - 1] == '/')
        r->dir[--n] = '\0';
    const char *slash = strrchr(r->dir, '/');
    snprintf(r->label, sizeof r->label, "%s", slash && slash[1] ? slash + 1 : r->dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/results.csv", r->dir);
    if (load_results(r, path, err, len) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/samples.csv", r->dir);
    if (load_samples(r, path, err, len) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/meta.json", r->dir);
    /* meta.json only labels the run: a missing or broken one leaves "?". */
    char why[300];
    json_t *json = gm_json_load(path, why, sizeof why);
    meta_fact(json, "device.name", r->device, sizeof r->device);
    meta_fact(json, "device.backend", r->backend, sizeof r->backend);
    meta_fact(json, "device.driver_version", r->driver, sizeof r->driver);
    meta_fact(json, "suite_version", r->version, sizeof r->version);
    json_decref(json);
    return 0;
}

void gm_cmp_run_free(gm_cmp_run *r)
{
    for (int i = 0; i < r->n_points; i++) {
        free(r->points[i].key);
        free(r->points[i].samples);
    }
    free(r->points);
    free(r->sorted);
    gm_csv_table_free(&r->results);
    r->points = NULL;
    r->sorted = NULL;
    r->n_points = 0;
}

int gm_cmp_worse_direction(const char *metric)
{
    return -(int)gm_metric_direction_of(metric);   /* lower is better: higher is worse */
}

void gm_cmp_point_label(const gm_cmp_point *p, char *out, size_t len)
{
    const char *const key[] = {p->suite, p->workload, p->variant, p->pattern, p->precision, p->batch, p->seq_len,
                               p->bytes};
    gm_point_label(key, out, len);
}
