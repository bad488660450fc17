/*
 * Loading a fleet (fleet.h): the run folders under a root, found by a
 * recursive walk that does not follow symbolic links, sorted by path so
 * the output is the same on every run; each folder's meta.json (parsed
 * whole, lib/json.h) and results.csv read once, the CSV streamed line by
 * line keeping only the ok rows' point, value and stdev (then samples.csv,
 * fleet_samples.c).
 * Points are found by key in fleet_points.c, so hundreds of folders cost
 * one pass each.
 */
#include "analysis/fleet.h"

#include "lib/csv.h"
#include "lib/json.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_COLS 64

typedef struct {
    char **dirs;
    int n, cap;
} dir_list;

static bool is_file(const char *dir, const char *name)
{
    char path[4400];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Adds dir if it is a run folder, then walks its subfolders. */
static int walk(const char *dir, dir_list *out, int depth, char *err, size_t err_len)
{
    if (is_file(dir, "results.csv") && is_file(dir, "meta.json")) {
        if (out->n == out->cap) {
            int cap = out->cap ? 2 * out->cap : 64;
            char **d = realloc(out->dirs, (size_t)cap * sizeof *d);
            if (!d)
                return -1;
            out->dirs = d;
            out->cap = cap;
        }
        if (!(out->dirs[out->n] = strdup(dir)))
            return -1;
        out->n++;
    }
    if (depth > 32)
        return 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (depth == 0) {
            snprintf(err, err_len, "%s: %s", dir, strerror(errno));
            return -1;
        }
        return 0;   /* an unreadable subfolder holds no run we can read */
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4400];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= 4096)
            continue;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            rc = walk(path, out, depth + 1, err, err_len);
    }
    closedir(d);
    return rc;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The GPU's host and identity from its meta.json (lib/json.h). */
static int read_meta(gm_fleet_gpu *g, char *err, size_t err_len)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/meta.json", g->dir);
    json_t *meta = gm_json_load(path, err, err_len);
    if (!meta)
        return -1;
    int rc = 0;
    if (!gm_json_at(meta, "schema_version")) {
        snprintf(err, err_len, "%s:1: not a gpumem meta.json (no schema_version)", path);
        rc = -1;
    } else {
        const char *host = gm_json_str(meta, "host.hostname"), *id = gm_json_str(meta, "device.uuid");
        snprintf(g->host, sizeof g->host, "%s", host ? host : "");
        snprintf(g->device_id, sizeof g->device_id, "%s", id ? id : "");
    }
    json_decref(meta);
    return rc;
}

static int add_obs(gm_fleet_point *p, int gpu, double value, double spread)
{
    if (p->n_obs && p->obs[p->n_obs - 1].gpu == gpu)
        return 0;   /* a point repeated within a run: its first row counts */
    if (p->n_obs == p->cap_obs) {
        int cap = p->cap_obs ? 2 * p->cap_obs : 8;
        gm_fleet_obs *o = realloc(p->obs, (size_t)cap * sizeof *o);
        if (!o)
            return -1;
        p->obs = o;
        p->cap_obs = cap;
    }
    p->obs[p->n_obs++] = (gm_fleet_obs){.gpu = gpu, .value = value, .spread = spread};
    return 0;
}

static bool parse_number(const char *s, bool empty_ok, double *out)
{
    if (!*s) {
        *out = 0;
        return empty_ok;
    }
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return !*end && errno == 0;
}

/* Column indices a results.csv needs: the key, then unit, value, stdev,
 * status, device, device_id (optional: schema 1 has none). */
enum { C_UNIT = GM_POINT_KEY_FIELDS, C_VALUE, C_STDEV, C_STATUS, C_DEVICE, C_DEVICE_ID, N_NEEDED };

static int read_results(gm_fleet *f, int gi, char *err, size_t err_len)
{
    gm_fleet_gpu *g = &f->gpus[gi];
    char path[4400];
    snprintf(path, sizeof path, "%s/results.csv", g->dir);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    const char *names[N_NEEDED] = {[C_UNIT] = "unit", "value", "stdev", "status", "device", "device_id"};
    memcpy(names, gm_point_key_columns, sizeof gm_point_key_columns);
    char *line = NULL, *fields[MAX_COLS];
    size_t cap = 0;
    int col[N_NEEDED], n_cols = -1, lineno = 1, rc;
    ssize_t got = getline(&line, &cap, fp);
    if (got > 0) {
        line[strcspn(line, "\r\n")] = '\0';
        n_cols = gm_csv_split(line, fields, MAX_COLS);
    }
    /* device_id is optional (schema 1 has none); it is the last name. */
    rc = gm_point_key_require(fields, n_cols, path, names, col, C_DEVICE_ID, err, err_len);
    gm_csv_find_columns(fields, n_cols, &names[C_DEVICE_ID], &col[C_DEVICE_ID], 1);
    if (rc == 0 && col[GM_POINT_KEY_MODE] < 0)
        g->train_run = gm_point_file_train(path);   /* a run of schema 3 or older ran one mode */
    while (rc == 0 && (got = getline(&line, &cap, fp)) > 0) {
        lineno++;
        f->rows_read++;
        if (line[got - 1] != '\n') {
            snprintf(err, err_len, "%s:%d: truncated line (no end of line)", path, lineno);
            rc = -1;
            break;
        }
        line[strcspn(line, "\r\n")] = '\0';
        if (gm_csv_split(line, fields, MAX_COLS) != n_cols) {
            snprintf(err, err_len, "%s:%d: malformed row (expected %d fields)", path, lineno, n_cols);
            rc = -1;
            break;
        }
        if (!g->device[0])
            snprintf(g->device, sizeof g->device, "%s", fields[col[C_DEVICE]]);
        if (!g->device_id[0] && col[C_DEVICE_ID] >= 0)
            snprintf(g->device_id, sizeof g->device_id, "%s", fields[col[C_DEVICE_ID]]);
        if (strcmp(fields[col[C_STATUS]], "ok") != 0)
            continue;
        double value, spread;
        if (!parse_number(fields[col[C_VALUE]], false, &value) || !parse_number(fields[col[C_STDEV]], true, &spread)) {
            snprintf(err, err_len, "%s:%d: value '%s' or stdev '%s' is not a number", path, lineno,
                     fields[col[C_VALUE]], fields[col[C_STDEV]]);
            rc = -1;
            break;
        }
        char *key[GM_POINT_KEY_FIELDS];
        for (int k = 0; k < GM_POINT_KEY_FIELDS; k++)
            key[k] = k == GM_POINT_KEY_MODE ? (char *)gm_point_key_mode(fields, col[k], col[0], col[1], g->train_run)
                                            : fields[col[k]];
        gm_fleet_point *p = gm_fleet_point_find(f, key, fields[col[C_UNIT]]);
        if (!p || add_obs(p, gi, value, spread) != 0) {
            snprintf(err, err_len, "%s:%d: cannot hold the point (out of memory, or a key over 4 KiB)", path, lineno);
            rc = -1;
        }
    }
    if (rc == 0 && ferror(fp)) {
        snprintf(err, err_len, "%s: read error", path);
        rc = -1;
    }
    free(line);
    fclose(fp);
    return rc;
}

int gm_fleet_load(gm_fleet *f, const char *root, char *err, size_t err_len)
{
    dir_list dirs = {0};
    err[0] = '\0';
    int rc = walk(root, &dirs, 0, err, err_len);
    if (rc != 0 && !err[0])
        snprintf(err, err_len, "out of memory listing %s", root);
    if (rc == 0 && dirs.n == 0) {
        snprintf(err, err_len, "%s: no run folder (a folder with results.csv and meta.json) under it", root);
        rc = -1;
    }
    if (rc == 0 && !(f->gpus = calloc((size_t)dirs.n, sizeof *f->gpus))) {
        snprintf(err, err_len, "out of memory");
        rc = -1;
    }
    if (rc == 0)
        qsort(dirs.dirs, (size_t)dirs.n, sizeof *dirs.dirs, by_path);
    for (int i = 0; i < dirs.n; i++) {
        if (rc == 0) {
            gm_fleet_gpu *g = &f->gpus[f->n_gpus++];
            g->dir = dirs.dirs[i];
            g->worst_point = -1;
            rc = read_meta(g, err, err_len);
            if (rc == 0)
                rc = read_results(f, f->n_gpus - 1, err, err_len);
            if (rc == 0)
                rc = gm_fleet_read_samples(f, f->n_gpus - 1, err, err_len);
        } else {
            free(dirs.dirs[i]);
        }
    }
    free(dirs.dirs);
    return rc;
}
