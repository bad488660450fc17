#include "report/plot_memory.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_LEN 32

typedef struct {
    double t;
    long order;                   /* file order: ties keep it */
    int process, phase;
    uint64_t bytes;
} trace_event;

typedef struct {
    char (*names)[NAME_LEN];
    int n, cap;
} name_table;

/* The index of name in t, added when new; -1 when out of memory. Searches
 * from the newest name: consecutive lines mostly share a process and phase. */
static int intern(name_table *t, const char *name)
{
    for (int i = t->n - 1; i >= 0; i--)
        if (strcmp(t->names[i], name) == 0)
            return i;
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        char(*grown)[NAME_LEN] = realloc(t->names, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        t->names = grown;
        t->cap = cap;
    }
    snprintf(t->names[t->n], NAME_LEN, "%s", name);
    return t->n++;
}

static int by_time(const void *a, const void *b)
{
    const trace_event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* Reads every line of the trace into *out (sorted by time). */
static int read_trace(FILE *f, const char *csv, trace_event **out, long *n_out, name_table *procs,
                      name_table *phases, char *err, size_t len)
{
    char line[512];
    long n = 0, cap = 0, lineno = 1;
    trace_event *ev = NULL;
    if (!fgets(line, sizeof line, f) || strcmp(line, "t_s,process,phase,live_bytes\n") != 0) {
        snprintf(err, len, "%s:1: not a gpumem memory trace header", csv);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char proc[NAME_LEN], phase[NAME_LEN];
        unsigned long long bytes;
        double t;
        int used = 0;
        if (!strchr(line, '\n')) {
            snprintf(err, len, "%s:%ld: truncated line (no end of line)", csv, lineno);
            free(ev);
            return -1;
        }
        if (sscanf(line, "%lf,%31[^,\n],%31[^,\n],%llu%n", &t, proc, phase, &bytes, &used) != 4
            || line[used] != '\n' || !(t >= 0 && t < 1e9)) {
            snprintf(err, len, "%s:%ld: malformed line (want t_s,process,phase,live_bytes)", csv, lineno);
            free(ev);
            return -1;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            trace_event *grown = realloc(ev, (size_t)cap * sizeof *ev);
            if (!grown) {
                free(ev);
                snprintf(err, len, "out of memory reading %s", csv);
                return -1;
            }
            ev = grown;
        }
        int p = intern(procs, proc), ph = intern(phases, phase);
        if (p < 0 || ph < 0) {
            free(ev);
            snprintf(err, len, "out of memory reading %s", csv);
            return -1;
        }
        ev[n] = (trace_event){t, n, p, ph, bytes};
        n++;
    }
    if (n)
        qsort(ev, (size_t)n, sizeof *ev, by_time);
    *out = ev;
    *n_out = n;
    return 0;
}

/* Writes one block per phase: the run's total at each of its events. */
static int write_blocks(FILE *o, const trace_event *ev, long n, const name_table *procs, const name_table *phases,
                        int *points)
{
    uint64_t *held = calloc((size_t)procs->n + 1, sizeof *held);
    if (!held)
        return -1;
    /* Phases in the order they first appear in time. */
    int *order = calloc((size_t)phases->n + 1, sizeof *order), n_order = 0;
    if (!order) {
        free(held);
        return -1;
    }
    for (long i = 0; i < n; i++) {
        int seen = 0;
        for (int k = 0; k < n_order && !seen; k++)
            seen = order[k] == ev[i].phase;
        if (!seen)
            order[n_order++] = ev[i].phase;
    }
    for (int k = 0; k < n_order; k++) {
        int ph = order[k];
        memset(held, 0, ((size_t)procs->n + 1) * sizeof *held);
        uint64_t total = 0;
        long last = -2;
        fprintf(o, "%s\"%s\" MiB\n", k ? "\n\n" : "", phases->names[ph]);
        for (long i = 0; i < n; i++) {
            total = total - held[ev[i].process] + ev[i].bytes;
            held[ev[i].process] = ev[i].bytes;
            if (ev[i].phase != ph)
                continue;
            if (last >= 0 && last != i - 1)
                fprintf(o, "\n");  /* the phase paused: break the line */
            fprintf(o, "%.6f %.6f\n", ev[i].t, (double)total / 1048576.0);
            last = i;
            (*points)++;
        }
    }
    free(order);
    free(held);
    return 0;
}

int gm_plot_memory_write(const char *csv, const char *dat, int *points, char *err, size_t len)
{
    *points = 0;
    FILE *f = fopen(csv, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, len, "cannot read %s: %s", csv, strerror(errno));
        return -1;
    }
    name_table procs = {0}, phases = {0};
    trace_event *ev = NULL;
    long n = 0;
    int rc = read_trace(f, csv, &ev, &n, &procs, &phases, err, len);
    fclose(f);
    bool held_any = false;
    for (long i = 0; i < n && !held_any; i++)
        held_any = ev[i].bytes > 0;
    if (rc == 0 && held_any) {          /* a run that held nothing has no plot */
        FILE *o = fopen(dat, "w");
        int bad = !o || write_blocks(o, ev, n, &procs, &phases, points) != 0;
        if ((o && fclose(o) != 0) || bad) {
            snprintf(err, len, "cannot write %s", dat);
            rc = -2;
        }
    }
    free(ev);
    free(procs.names);
    free(phases.names);
    return rc;
}

int gm_plot_memory_cap(const char *dat, const char *phase, uint64_t cap, const char *label, const char *caps,
                       char *err, size_t len)
{
    FILE *f = fopen(dat, "r");
    if (!f)
        return 0;
    char line[512], want[NAME_LEN + 8];
    snprintf(want, sizeof want, "\"%s\" MiB\n", phase);
    int in = 0, seen = 0;
    double first = 0, last = 0, t, mib;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '"') {
            in = strcmp(line, want) == 0;
            continue;
        }
        if (in && sscanf(line, "%lf %lf", &t, &mib) == 2) {
            if (!seen)
                first = t;
            last = t;
            seen = 1;
        }
    }
    fclose(f);
    if (!seen)
        return 0;
    FILE *o = fopen(caps, "a");
    if (!o) {
        snprintf(err, len, "cannot write %s", caps);
        return -1;
    }
    long at = ftell(o);
    fprintf(o, "%s\"%s\" MiB\n%.6f %.6f\n%.6f %.6f\n", at > 0 ? "\n\n" : "", label, first,
            (double)cap / 1048576.0, last, (double)cap / 1048576.0);
    if (fclose(o) != 0) {
        snprintf(err, len, "cannot write %s", caps);
        return -1;
    }
    return 1;
}
