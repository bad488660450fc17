/* Rounds of gpumem bench: see rounds.h. */
#include "bench/rounds.h"

#include "lib/csv_table.h"
#include "lib/stats.h"
#include "run/point_key.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *key;              /* the point and metric: gm_point_key_join */
    double *v;              /* samples of the rounds so far */
    size_t n, cap;
    bool failed;            /* a failed row of this key was written */
} pool_entry;

struct gm_round_pool {
    pool_entry *e;
    size_t n, cap;
};

struct gm_round_pool *gm_round_pool_new(void) { return calloc(1, sizeof(struct gm_round_pool)); }

void gm_round_pool_free(struct gm_round_pool *pool)
{
    if (!pool)
        return;
    for (size_t i = 0; i < pool->n; i++) {
        free(pool->e[i].key);
        free(pool->e[i].v);
    }
    free(pool->e);
    free(pool);
}

unsigned gm_round_reps(unsigned reps, int round, int rounds)
{
    if (rounds <= 1)
        return reps;
    unsigned share = reps / (unsigned)rounds + ((unsigned)round < reps % (unsigned)rounds ? 1 : 0);
    return share ? share : 1;
}

/* The point key (run/point_key.h) of a row as results.csv writes it.
 * Returns 0, or -1 when it does not fit in len. */
static int row_key(const gm_row *r, char *out, size_t len)
{
    char num[3][24];
    uint64_t v[3] = {r->batch, r->seq_len, r->bytes};
    for (int i = 0; i < 3; i++) {
        if (v[i])
            snprintf(num[i], sizeof num[i], "%llu", (unsigned long long)v[i]);
        else
            num[i][0] = '\0';
    }
    const char *f[GM_POINT_KEY_FIELDS] = {r->suite, r->workload, r->variant, r->pattern, r->precision,
                                          r->mode,  num[0],      num[1],     num[2],     r->metric};
    for (int i = 0; i < GM_POINT_KEY_FIELDS; i++)
        f[i] = f[i] ? f[i] : "";
    return gm_point_key_join(f, out, len);
}

/* The entry of key, added when missing; NULL when out of memory. */
static pool_entry *entry_of(struct gm_round_pool *pool, const char *key)
{
    for (size_t i = pool->n; i-- > 0;)
        if (strcmp(pool->e[i].key, key) == 0)
            return &pool->e[i];
    if (pool->n == pool->cap) {
        size_t cap = pool->cap ? 2 * pool->cap : 64;
        pool_entry *e = realloc(pool->e, cap * sizeof *e);
        if (!e)
            return NULL;
        pool->e = e;
        pool->cap = cap;
    }
    pool_entry *e = &pool->e[pool->n];
    memset(e, 0, sizeof *e);
    if (!(e->key = strdup(key)))
        return NULL;
    pool->n++;
    return e;
}

static int entry_add(pool_entry *e, const double *v, size_t n)
{
    if (e->n + n > e->cap) {
        size_t cap = e->cap ? e->cap : 16;
        while (cap < e->n + n)
            cap *= 2;
        double *nv = realloc(e->v, cap * sizeof *nv);
        if (!nv)
            return -1;
        e->v = nv;
        e->cap = cap;
    }
    memcpy(e->v + e->n, v, n * sizeof *v);
    e->n += n;
    return 0;
}

/* Reads path and, per line, adds its value (samples) or marks a failed
 * row (results). */
static int load_file(struct gm_round_pool *pool, const char *path, bool samples, char *err, size_t err_len)
{
    gm_csv_table t;
    if (gm_csv_table_load(path, &t, err, err_len) != 0)
        return -1;
    const char *names[GM_POINT_KEY_FIELDS + 1];
    memcpy(names, gm_point_key_columns, sizeof gm_point_key_columns);
    names[GM_POINT_KEY_FIELDS] = samples ? "value" : "status";
    int cols[GM_POINT_KEY_FIELDS + 1];
    int rc = gm_csv_table_columns(&t, path, names, cols, GM_POINT_KEY_FIELDS + 1, err, err_len);
    for (int i = 0; rc == 0 && i < t.n_rows; i++) {
        const char *f[GM_POINT_KEY_FIELDS];
        for (int c = 0; c < GM_POINT_KEY_FIELDS; c++)
            f[c] = t.fields[i][cols[c]];
        const char *last = t.fields[i][cols[GM_POINT_KEY_FIELDS]];
        if (!samples && strcmp(last, "ok") == 0)
            continue;
        char key[1024];
        if (gm_point_key_join(f, key, sizeof key) != 0) {
            snprintf(err, err_len, "%s: a point key longer than %zu bytes", path, sizeof key);
            rc = -1;
            break;
        }
        pool_entry *e = entry_of(pool, key);
        double v = samples ? strtod(last, NULL) : 0;
        if (!e || (samples ? entry_add(e, &v, 1) : 0) != 0) {
            snprintf(err, err_len, "out of memory");
            rc = -1;
        } else if (!samples) {
            e->failed = true;
        }
    }
    gm_csv_table_free(&t);
    return rc;
}

int gm_round_pool_load(struct gm_round_pool *pool, const char *dir, char *err, size_t err_len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/samples.csv", dir);
    if (load_file(pool, path, true, err, err_len) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/results.csv", dir);
    return load_file(pool, path, false, err, err_len);
}

static int out_of_memory(char *err, size_t err_len)
{
    snprintf(err, err_len, "out of memory keeping the samples of earlier rounds");
    return 1;
}

int gm_rounds_emit(struct gm_round_pool *pool, int round, int rounds, gm_run *run, const gm_row *row,
                   const double *samples, size_t n, gm_row_writer write, void *ctx, char *err, size_t err_len)
{
    char key[1024];
    if (row_key(row, key, sizeof key) != 0) {
        snprintf(err, err_len, "a point key longer than %zu bytes", sizeof key);
        return 1;
    }
    pool_entry *e = entry_of(pool, key);
    if (!e)
        return out_of_memory(err, err_len);
    if (e->failed)
        return 0;                          /* its failed row is written */
    bool last = round >= rounds - 1;
    bool pooled = row->status == GM_ROW_OK && n > 0 && n == row->reps;
    if (!last && row->status != GM_ROW_OK) {
        e->failed = true;
        return write(ctx, row, samples, n);
    }
    if (!last) {
        if (!pooled)
            return 0;                      /* one exact value: the last round's is written */
        run->round = round + 1;
        if (gm_run_write_samples(run, row, samples, n, err, err_len) != 0)
            return 1;
        return entry_add(e, samples, n) == 0 ? 0 : out_of_memory(err, err_len);
    }
    run->round = round + 1;
    if (!pooled || !e->n)
        return write(ctx, row, samples, n);
    if (entry_add(e, samples, n) != 0)
        return out_of_memory(err, err_len);
    gm_stats s;
    gm_stats_compute(e->v, e->n, &s);
    gm_row all = *row;
    all.value = s.median;
    all.min = s.min;
    all.max = s.max;
    all.stdev = s.stdev;
    all.reps = e->n;
    int rc = write(ctx, &all, samples, n);
    free(e->v);
    e->v = NULL;
    e->n = e->cap = 0;
    return rc;
}
