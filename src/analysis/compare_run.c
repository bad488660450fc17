/* Reading a run folder for gpumem compare (src/compare.h), and the table
 * of which way each metric gets worse. */
#include "analysis/compare.h"
#include "lib/json.h"
#include "analysis/metric_direction.h"
#include "run/point_key.h"
#include "analysis/stats_compare.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The columns that make a point's key (point_key.h): cols[0..N_KEY). */
#define N_KEY GM_POINT_KEY_FIELDS

/* The point key of a row (gm_point_key_join), malloc'd; NULL when out of
 * memory. A run without the mode column ran one mode: train_run. */
static char *make_key(char **row, const int *cols, bool train_run)
{
    const char *fields[N_KEY];
    size_t len = 1;
    for (int i = 0; i < N_KEY; i++)
        len += strlen(fields[i] = i == GM_POINT_KEY_MODE ? gm_point_key_mode(row, cols[i], cols[0], cols[1], train_run)
                                                         : row[cols[i]]) + 1;
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
    const gm_csv_table *t = &r->results;
    if (gm_point_key_require(t->header, t->n_cols, path, names, cols, N_KEY + 5, err, len) != 0)
        return -1;
    /* A run of schema 3 or older has no mode column and ran one mode. */
    for (int i = 0; i < t->n_rows && cols[GM_POINT_KEY_MODE] < 0 && !r->train_run; i++)
        r->train_run = gm_point_note_train(t->fields[i][cols[N_KEY + 3]]);
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
        const char **f[] = {&p->suite, &p->workload, &p->variant, &p->pattern, &p->precision, &p->mode, &p->batch,
                            &p->seq_len, &p->bytes, &p->metric, &p->unit, NULL, &p->status, &p->note};
        for (int c = 0; c < N_KEY + 4; c++)
            if (f[c])
                *f[c] = c == GM_POINT_KEY_MODE ? gm_point_key_mode(row, cols[c], cols[0], cols[1], r->train_run)
                                               : row[cols[c]];
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
        if (!(p->key = make_key(row, cols, r->train_run))) {
            snprintf(err, len, "out of memory");
            return -1;
        }
        r->back_to_back = r->back_to_back || gm_point_note_launches(p->note) > 1;
        r->sorted[r->n_points++] = p;
    }
    qsort(r->sorted, (size_t)r->n_points, sizeof *r->sorted, by_key);
    for (int i = 1; i < r->n_points; i++)
        if (strcmp(r->sorted[i]->key, r->sorted[i - 1]->key) == 0)
            r->sorted[i]->repeated = r->sorted[i - 1]->repeated = 1;
    return 0;
}

/* Appends a sample of (round, member) to p. */
static int add_sample(gm_cmp_point *p, double v, int round, int member)
{
    if (p->n_samples == p->cap_samples) {
        size_t cap = p->cap_samples ? 2 * p->cap_samples : 16;
        double *s = realloc(p->samples, cap * sizeof *s);
        if (s)
            p->samples = s;
        int *r = realloc(p->round, cap * sizeof *r);
        if (r)
            p->round = r;
        int *m = realloc(p->member, cap * sizeof *m);
        if (m)
            p->member = m;
        if (!s || !r || !m)
            return -1;
        p->cap_samples = cap;
    }
    p->samples[p->n_samples] = v;
    p->round[p->n_samples] = round;
    p->member[p->n_samples++] = member;
    return 0;
}

/* Reads samples.csv; its `round` column (schema 3) is optional: older
 * runs' samples count as one round. */
static int load_samples(gm_cmp_run *r, const char *path, char *err, size_t len)
{
    gm_csv_table t;
    if (gm_csv_table_load(path, &t, err, len) != 0)
        return -1;
    int cols[N_KEY + 1];
    const char *names[N_KEY + 1];
    memcpy(names, gm_point_key_columns, sizeof gm_point_key_columns);
    names[N_KEY] = "value";
    int rc = gm_point_key_require(t.header, t.n_cols, path, names, cols, N_KEY + 1, err, len);
    int round_col = gm_csv_table_column(&t, "round");
    for (int i = 0; rc == 0 && i < t.n_rows; i++) {
        double v, round = 0;
        if (number(t.fields[i][cols[N_KEY]], 0, &v) != 0
            || (round_col >= 0 && number(t.fields[i][round_col], 1, &round) != 0)) {
            snprintf(err, len, "%s:%d: %s '%s' is not a number", path, i + 2,
                     number(t.fields[i][cols[N_KEY]], 0, &v) != 0 ? "value" : "round",
                     number(t.fields[i][cols[N_KEY]], 0, &v) != 0 ? t.fields[i][cols[N_KEY]] : t.fields[i][round_col]);
            rc = -1;
            break;
        }
        char *key = make_key(t.fields[i], cols, r->train_run);
        gm_cmp_point *p = key ? gm_cmp_run_find(r, key) : NULL;
        free(key);
        if (!p)
            continue;                 /* samples of a row the run did not finish: nothing to join */
        if (add_sample(p, v, (int)round, 0) != 0) {
            snprintf(err, len, "out of memory");
            rc = -1;
            break;
        }
    }
    gm_csv_table_free(&t);
    return rc;
}

static void meta_fact(const json_t *json, const char *path, char *out, size_t len)
{
    const char *v = gm_json_str(json, path);
    snprintf(out, len, "%s", v ? v : "?");
}

static int load_one(const char *dir, gm_cmp_run *r, char *err, size_t len)
{
    memset(r, 0, sizeof *r);
    r->n_members = 1;
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    size_t n = strlen(r->dir);
    while (n > 1 && r->dir[n - 1] == '/')
        r->dir[--n] = '\0';
    const char *slash = strrchr(r->dir, '/');
    /* A label is the folder's last name, cut to the label's size. */
    snprintf(r->label, sizeof r->label, "%.*s", (int)sizeof r->label - 1, slash && slash[1] ? slash + 1 : r->dir);
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

/* Adds the ok points' samples of member run m (index `member`) to r's
 * points of the same key. */
static int merge_member(gm_cmp_run *r, const gm_cmp_run *m, int member)
{
    for (int i = 0; i < m->n_points; i++) {
        const gm_cmp_point *q = &m->points[i];
        gm_cmp_point *p = gm_cmp_run_find(r, q->key);
        if (!p || q->repeated || strcmp(q->status, "ok") != 0)
            continue;
        for (size_t j = 0; j < q->n_samples; j++)
            if (add_sample(p, q->samples[j], q->round[j], member) != 0)
                return -1;
    }
    return 0;
}

int gm_cmp_run_load(const char *dir, gm_cmp_run *r, char *err, size_t len)
{
    struct stat st;
    const char *comma = strchr(dir, ',');
    if (!comma || stat(dir, &st) == 0)
        return load_one(dir, r, err, len);
    char first[4096];
    snprintf(first, sizeof first, "%.*s", (int)(comma - dir), dir);
    if (load_one(first, r, err, len) != 0)
        return -1;
    int members = 1;
    for (const char *at = comma + 1; *at; members++) {
        const char *end = strchr(at, ',');
        size_t n = end ? (size_t)(end - at) : strlen(at);
        char one[4096];
        snprintf(one, sizeof one, "%.*s", (int)n, at);
        gm_cmp_run m;
        int rc = load_one(one, &m, err, len);
        if (rc == 0 && merge_member(r, &m, members) != 0) {
            snprintf(err, len, "out of memory");
            rc = -1;
        }
        gm_cmp_run_free(&m);
        if (rc != 0)
            return -1;
        at = end ? end + 1 : at + n;
    }
    r->n_members = members;
    for (int i = 0; i < r->n_points; i++)
        if (r->points[i].n_samples)
            r->points[i].value = gm_median(r->points[i].samples, r->points[i].n_samples);
    char label[256];
    snprintf(label, sizeof label, "%.200s+%d", r->label, members - 1);
    snprintf(r->label, sizeof r->label, "%s", label);
    return 0;
}

void gm_cmp_run_free(gm_cmp_run *r)
{
    for (int i = 0; i < r->n_points; i++) {
        free(r->points[i].key);
        free(r->points[i].samples);
        free(r->points[i].round);
        free(r->points[i].member);
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
    const char *const key[] = {p->suite, p->workload, p->variant, p->pattern, p->precision, p->mode, p->batch,
                               p->seq_len, p->bytes};
    gm_point_label(key, out, len);
}
