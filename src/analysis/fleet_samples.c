/*
 * A run's samples.csv for the fleet (fleet.h): streamed once; each run of
 * consecutive lines with the same point key (a row's repetitions, which
 * gm_run_write writes together) gives that point's robust spread for this
 * GPU, 1.4826 x the MAD of the repetitions, which one repetition slowed by
 * a neighbour's burst barely moves (the stdev would).
 */
#include "analysis/fleet.h"

#include "lib/csv.h"
#include "lib/stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 64

typedef struct {
    gm_fleet_point *point;     /* the group's point (NULL: none ok in results.csv) */
    double *v;
    int n, cap;
    char key[4096];            /* the group's joined key, "" before the first */
} group;

/* Sets the spread of the group's point on `gpu`, then empties the group.
 * The point stays where it is: looking points up never adds one. */
static void close_group(int gpu, group *g)
{
    gm_fleet_point *p = g->point;
    if (g->n >= 2 && p && p->n_obs && p->obs[p->n_obs - 1].gpu == gpu) {
        double m = gm_median_in_place(g->v, (size_t)g->n);
        p->obs[p->n_obs - 1].spread = GM_MAD_TO_SIGMA * gm_mad_in_place(g->v, (size_t)g->n, m);
    }
    g->n = 0;
}

int gm_fleet_read_samples(gm_fleet *f, int gpu, char *err, size_t err_len)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/samples.csv", f->gpus[gpu].dir);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;   /* no samples: the stdev of results.csv stands */
    const char *names[GM_POINT_KEY_FIELDS + 1];
    memcpy(names, gm_point_key_columns, sizeof gm_point_key_columns);
    names[GM_POINT_KEY_FIELDS] = "value";
    char *line = NULL, *fields[MAX_COLS], *key[GM_POINT_KEY_FIELDS];
    size_t cap = 0;
    int col[GM_POINT_KEY_FIELDS + 1], n_cols = -1, lineno = 1, rc;
    group g = {0};
    ssize_t got = getline(&line, &cap, fp);
    if (got > 0) {
        line[strcspn(line, "\r\n")] = '\0';
        n_cols = gm_csv_split(line, fields, MAX_COLS);
    }
    rc = gm_point_key_require(fields, n_cols, path, names, col, GM_POINT_KEY_FIELDS + 1, err, err_len);
    while (rc == 0 && (got = getline(&line, &cap, fp)) > 0) {
        lineno++;
        if (line[got - 1] != '\n' || (line[got - 1] = '\0', gm_csv_split(line, fields, MAX_COLS) != n_cols)) {
            snprintf(err, err_len, "%s:%d: malformed or truncated row (expected %d fields)", path, lineno, n_cols);
            rc = -1;
            break;
        }
        char joined[4096], *end;
        for (int k = 0; k < GM_POINT_KEY_FIELDS; k++)
            key[k] = k == GM_POINT_KEY_MODE ? (char *)gm_point_key_mode(fields, col[k], col[0], col[1],
                                                                         f->gpus[gpu].train_run)
                                            : fields[col[k]];
        if (gm_point_key_join((const char *const *)key, joined, sizeof joined) != 0) {
            snprintf(err, err_len, "%s:%d: point key over %zu bytes", path, lineno, sizeof joined);
            rc = -1;
            break;
        }
        if (strcmp(joined, g.key) != 0) {
            close_group(gpu, &g);
            memcpy(g.key, joined, sizeof g.key);
            g.point = gm_fleet_point_find(f, key, NULL);
        }
        errno = 0;
        double v = strtod(fields[col[GM_POINT_KEY_FIELDS]], &end);
        if (*end || end == fields[col[GM_POINT_KEY_FIELDS]] || errno) {
            snprintf(err, err_len, "%s:%d: value '%s' is not a number", path, lineno, fields[col[GM_POINT_KEY_FIELDS]]);
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
    if (rc == 0)
        close_group(gpu, &g);
    free(g.v);
    free(line);
    fclose(fp);
    return rc;
}
