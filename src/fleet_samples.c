/*
 * A run's samples.csv for the fleet (fleet.h): streamed once; each run of
 * consecutive lines with the same point key (a row's repetitions, which
 * gm_run_write writes together) gives that point's robust spread for this
 * GPU, 1.4826 x the MAD of the repetitions, which one repetition slowed by
 * a neighbour's burst barely moves (the stdev would).
 */
#include "fleet.h"

#include "csv.h"
#include "stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 64

typedef struct {
    double *v;
    int n, cap;
    char key[4096];            /* the group's joined key, "" before the first */
} group;

/* Sets the spread of the group's point on `gpu`, then empties the group. */
static void close_group(gm_fleet *f, int gpu, group *g, char **key)
{
    if (g->n >= 2) {
        gm_fleet_point *p = gm_fleet_point_find(f, key, NULL);
        if (p && p->n_obs && p->obs[p->n_obs - 1].gpu == gpu) {
            double m = gm_median_in_place(g->v, (size_t)g->n);
            p->obs[p->n_obs - 1].spread = GM_MAD_TO_SIGMA * gm_mad_in_place(g->v, (size_t)g->n, m);
        }
    }
    g->n = 0;
}

static void join(char **key, char *out, size_t len)
{
    size_t j = 0;
    out[0] = '\0';
    for (int k = 0; k < GM_FLEET_KEY_FIELDS && j < len; k++)
        j += (size_t)snprintf(out + j, len - j, "%s\x1f", key[k]);
}

int gm_fleet_read_samples(gm_fleet *f, int gpu, char *err, size_t err_len)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/samples.csv", f->gpus[gpu].dir);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;   /* no samples: the stdev of results.csv stands */
    char *line = NULL, *fields[MAX_COLS], *key[GM_FLEET_KEY_FIELDS], *prev[GM_FLEET_KEY_FIELDS];
    size_t cap = 0;
    int col[GM_FLEET_KEY_FIELDS + 1], n_cols = -1, lineno = 1, rc = 0;
    group g = {0};
    char prev_buf[4096] = "";
    ssize_t got = getline(&line, &cap, fp);
    if (got > 0) {
        line[strcspn(line, "\r\n")] = '\0';
        n_cols = gm_csv_split(line, fields, MAX_COLS);
    }
    for (int c = 0; c <= GM_FLEET_KEY_FIELDS && rc == 0; c++) {
        const char *name = c < GM_FLEET_KEY_FIELDS ? gm_fleet_key_columns[c] : "value";
        col[c] = -1;
        for (int i = 0; i < n_cols; i++)
            if (strcmp(fields[i], name) == 0)
                col[c] = i;
        if (col[c] < 0) {
            snprintf(err, err_len, "%s:1: not a gpumem samples header (no column '%s')", path, name);
            rc = -1;
        }
    }
    while (rc == 0 && (got = getline(&line, &cap, fp)) > 0) {
        lineno++;
        if (line[got - 1] != '\n' || (line[got - 1] = '\0', gm_csv_split(line, fields, MAX_COLS) != n_cols)) {
            snprintf(err, err_len, "%s:%d: malformed or truncated row (expected %d fields)", path, lineno, n_cols);
            rc = -1;
            break;
        }
        char joined[4096], *end;
        for (int k = 0; k < GM_FLEET_KEY_FIELDS; k++)
            key[k] = fields[col[k]];
        join(key, joined, sizeof joined);
        if (strcmp(joined, prev_buf) != 0) {
            if (prev_buf[0]) {
                /* prev points into prev_buf, split on the separators. */
                char tmp[4096];
                memcpy(tmp, prev_buf, sizeof tmp);
                char *s = tmp;
                for (int k = 0; k < GM_FLEET_KEY_FIELDS; k++) {
                    prev[k] = s;
                    s = strchr(s, '\x1f');
                    *s++ = '\0';
                }
                close_group(f, gpu, &g, prev);
            }
            memcpy(prev_buf, joined, sizeof prev_buf);
        }
        errno = 0;
        double v = strtod(fields[col[GM_FLEET_KEY_FIELDS]], &end);
        if (*end || end == fields[col[GM_FLEET_KEY_FIELDS]] || errno) {
            snprintf(err, err_len, "%s:%d: value '%s' is not a number", path, lineno, fields[col[GM_FLEET_KEY_FIELDS]]);
            rc = -1;
            break;
        }
        if (g.n == g.cap) {
            int c2 = g.cap ? 2 * g.cap : 64;
            double *nv = realloc(g.v, (size_t)c2 * sizeof *nv);
            if (!nv) {
                snprintf(err, err_len, "out of memory reading %s", path);
                rc = -1;
                break;
            }
            g.v = nv;
            g.cap = c2;
        }
        g.v[g.n++] = v;
    }
    if (rc == 0 && prev_buf[0]) {
        char *s = prev_buf;
        for (int k = 0; k < GM_FLEET_KEY_FIELDS; k++) {
            prev[k] = s;
            s = strchr(s, '\x1f');
            *s++ = '\0';
        }
        close_group(f, gpu, &g, prev);
    }
    free(g.v);
    free(line);
    fclose(fp);
    return rc;
}
