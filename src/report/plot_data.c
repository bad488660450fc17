#include "report/plot_data.h"
#include "lib/csv_table.h"

#include "lib/csv.h"
#include "lib/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gm_plot_data_load(const char *path, gm_plot_data *d, char *err, size_t len)
{
    memset(d, 0, sizeof *d);
    if (gm_csv_table_load(path, &d->table, err, len) != 0)
        return -1;
    static const char *const need[] = {"backend", "device", "suite", "workload", "variant", "pattern", "precision",
                                       "batch", "seq_len", "bytes", "metric", "value", "status", "note"};
    int cols[14];
    if (gm_csv_table_columns(&d->table, path, need, cols, 14, err, len) != 0) {
        gm_plot_data_free(d);
        return -1;
    }
    int *dst[] = {&d->col_backend, &d->col_device, &d->col_suite, &d->col_workload, &d->col_variant,
                  &d->col_pattern, &d->col_precision, &d->col_batch, &d->col_seq, &d->col_bytes,
                  &d->col_metric, &d->col_value, &d->col_status, &d->col_note};
    for (int i = 0; i < 14; i++)
        *dst[i] = cols[i];
    d->col_model = gm_csv_table_column(&d->table, "model");
    d->col_mode = gm_csv_table_column(&d->table, "mode");
    d->col_unit = gm_csv_table_column(&d->table, "unit");
    d->fields = d->table.fields;
    d->n_rows = d->table.n_rows;
    d->n_cols = d->table.n_cols;
    return 0;
}

void gm_plot_data_free(gm_plot_data *d)
{
    gm_csv_table_free(&d->table);
    memset(d, 0, sizeof *d);
}

const char *gm_plot_point_name(const gm_plot_data *d, char *const *r, char *buf, size_t len)
{
    const char *model = d->col_model >= 0 ? r[d->col_model] : "", *mode = d->col_mode >= 0 ? r[d->col_mode] : "";
    if (model[0] && strcmp(r[d->col_workload], "block") == 0)
        snprintf(buf, len, "%s %s %s", model, r[d->col_precision], mode[0] ? mode : "inference");
    else
        snprintf(buf, len, "%s %s %s%s", r[d->col_workload], r[d->col_variant], r[d->col_precision],
                 strcmp(mode, "train") == 0 ? " train" : "");
    return buf;
}

static const char *const kinds[GM_PLOT_KINDS] = {"bandwidth", "throughput", "oom_frontier", "swap_latency",
                                                 "swap_bandwidth", "allocator", "fragmentation", "serve"};

/* Whether the kind's script draws y on a logarithmic axis (plots/KIND.gp):
 * there a y of 0 or less cannot be drawn. */
static const int log_y[GM_PLOT_KINDS] = {0, 0, 1, 1, 0, 1, 0, 0};

const char *gm_plot_kind_name(int k) { return kinds[k]; }

const char *gm_plot_stream_family(const char *kernel, int *dashed)
{
    static const char *const pairs[][3] = {
        {"read", "write", "read-write"}, {"copy", "scale", "copy-scale"}, {"add", "triad", "add-triad"}};
    *dashed = 0;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        if (strcmp(kernel, pairs[i][0]) == 0)
            return pairs[i][2];
        if (strcmp(kernel, pairs[i][1]) == 0) {
            *dashed = 1;
            return pairs[i][2];
        }
    }
    return kernel;
}

/* Whether the stream rows of d have more than one variant (access
 * pattern): only then does a legend need to name it. */
static int stream_variants_differ(const gm_plot_data *d)
{
    const char *seen = NULL;
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i];
        if (strcmp(r[d->col_suite], "stream") != 0)
            continue;
        if (seen && strcmp(seen, r[d->col_variant]) != 0)
            return 1;
        seen = r[d->col_variant];
    }
    return 0;
}

#define F(c) r[d->col_##c]
#define IS(c, v) (strcmp(F(c), (v)) == 0)
static int pick_point(const gm_plot_data *d, int k, char **r, gm_plot_point *p, int variants);

/* Fills p from row r for plot kind k; returns 0 when the row is not shown.
 * `variants`: the stream rows have several access patterns. A series'
 * colour key is its name unless the kind pairs series (pick_point). */
static int pick(const gm_plot_data *d, int k, char **r, gm_plot_point *p, int variants)
{
    if (!IS(status, "ok") || !F(value)[0])
        return 0;
    memset(p, 0, sizeof *p);
    snprintf(p->panel, sizeof p->panel, "all");
    int ok = pick_point(d, k, r, p, variants);
    if (ok && !p->colour[0])
        snprintf(p->colour, sizeof p->colour, "%s", p->series);
    return ok;
}

static int pick_point(const gm_plot_data *d, int k, char **r, gm_plot_point *p, int variants)
{
    char sz[32], name[100];
    p->y = atof(F(value));
    switch (k) {
    case 0:
        if (!IS(suite, "stream") || !IS(metric, "bandwidth"))
            return 0;
        p->x = atof(F(bytes));
        snprintf(p->panel, sizeof p->panel, "%s", gm_plot_stream_family(F(workload), &p->dashed));
        snprintf(p->series, sizeof p->series, "%s %s%s%s", F(workload), F(precision), variants ? " " : "",
                 variants ? F(variant) : "");
        snprintf(p->colour, sizeof p->colour, "%s", p->series + strlen(F(workload)) + 1);
        return 1;
    case 1:
        if (!IS(suite, "workloads") || !IS(metric, "throughput"))
            return 0;
        p->x = atof(F(batch));
        snprintf(p->series, sizeof p->series, "%s s=%s", gm_plot_point_name(d, r, name, sizeof name), F(seq));
        return 1;
    case 2:
        if (!IS(suite, "oom") || !(IS(metric, "max_batch") || IS(metric, "max_batch_model")) || !F(seq)[0])
            return 0;
        p->x = atof(F(seq));
        p->dashed = IS(metric, "max_batch_model");
        snprintf(p->panel, sizeof p->panel, "%s", F(pattern));
        snprintf(p->series, sizeof p->series, "%s%s", gm_plot_point_name(d, r, name, sizeof name),
                 p->dashed ? " (model)" : "");
        snprintf(p->colour, sizeof p->colour, "%s", name);
        return 1;
    case 3:
        if (!IS(suite, "swap") || !IS(workload, "transfer") || !(IS(metric, "latency_p50") || IS(metric, "latency_p99")))
            return 0;
        p->x = atof(F(bytes));
        p->dashed = IS(metric, "latency_p99");
        snprintf(p->panel, sizeof p->panel, "%s", F(pattern));     /* a panel per host memory kind */
        snprintf(p->series, sizeof p->series, "%s %s", F(variant), p->dashed ? "p99" : "p50");
        snprintf(p->band, sizeof p->band, "%s", F(variant));
        snprintf(p->colour, sizeof p->colour, "%s", F(variant));
        return 1;
    case 4:
        if (!IS(suite, "swap") || !IS(workload, "transfer") || !IS(metric, "bandwidth"))
            return 0;
        p->x = atof(F(bytes));
        snprintf(p->series, sizeof p->series, "%s %s", F(pattern), F(variant));
        return 1;
    case 5:
        if (!IS(suite, "oom") || !IS(workload, "allocator") || !IS(metric, "alloc_latency_p50")
            || strncmp(F(variant), "fill-", 5) != 0)
            return 0;
        p->x = atof(F(variant) + 5);
        snprintf(p->series, sizeof p->series, "%s %s", F(pattern),
                 gm_format_size(strtoull(F(bytes), NULL, 10), sz, sizeof sz));
        return 1;
    case 6:
        if (!IS(suite, "oom") || !IS(metric, "fragmentation") || strncmp(F(variant), "fill-", 5) != 0)
            return 0;
        p->x = atof(F(variant) + 5);
        p->y *= 100;
        snprintf(p->series, sizeof p->series, "%s", F(pattern));
        return 1;
    case 7:
        /* Decode tokens/s against running sequences; dashed, the tokens/s
         * the memory allows (running / the roofline's step time). */
        if (!IS(suite, "serve") || !IS(variant, "decode") || !(IS(metric, "tokens") || IS(metric, "roofline_time")))
            return 0;
        p->x = atof(F(batch));
        p->dashed = IS(metric, "roofline_time");
        if (p->dashed)
            p->y = p->y > 0 ? p->x / (p->y / 1e3) : 0;
        snprintf(name, sizeof name, "%s %s s=%s", d->col_model >= 0 ? F(model) : "", F(precision), F(seq));
        snprintf(p->series, sizeof p->series, "%s%s", name, p->dashed ? " (roofline)" : "");
        snprintf(p->colour, sizeof p->colour, "%s", name);
        return 1;
    }
    return 0;
}
#undef IS
#undef F

static int by_panel_series_x(const void *a, const void *b)
{
    const gm_plot_point *p = a, *q = b;
    int c = strcmp(p->panel, q->panel);
    if (!c)
        c = p->dashed - q->dashed;
    if (!c)
        c = strcmp(p->series, q->series);
    return c ? c : (p->x > q->x) - (p->x < q->x);
}

int gm_plot_select(const gm_plot_data *d, int k, gm_plot_set *set)
{
    memset(set, 0, sizeof *set);
    set->kind = kinds[k];
    set->points = calloc((size_t)d->n_rows + 1, sizeof *set->points);
    if (!set->points)
        return -1;
    int variants = k == 0 && stream_variants_differ(d);
    for (int i = 0; i < d->n_rows; i++) {
        gm_plot_point *p = &set->points[set->n_points];
        if (!pick(d, k, d->fields[i], p, variants))
            continue;
        p->off_axis = log_y[k] && !(p->y > 0);
        int j = 0;
        while (j < set->n_panels && strcmp(set->panels[j], p->panel) != 0)
            j++;
        if (j == set->n_panels) {
            if (set->n_panels == GM_PLOT_MAX_PANELS)
                continue;            /* more panels than a page holds: the rest are left out */
            snprintf(set->panels[set->n_panels++], sizeof set->panels[0], "%s", p->panel);
        }
        set->n_points++;
    }
    /* A bandwidth panel holding only its family's second kernel draws it
     * solid: dashed means "the other kernel of the panel". */
    for (int p = 0; k == 0 && p < set->n_panels; p++) {
        int solid = 0;
        for (int i = 0; i < set->n_points && !solid; i++)
            solid = !set->points[i].dashed && !strcmp(set->points[i].panel, set->panels[p]);
        for (int i = 0; i < set->n_points && !solid; i++)
            if (!strcmp(set->points[i].panel, set->panels[p]))
                set->points[i].dashed = 0;
    }
    qsort(set->points, (size_t)set->n_points, sizeof *set->points, by_panel_series_x);
    /* A solid point's band reaches up to the dashed point of its band at the same x. */
    for (int i = 0; i < set->n_points; i++) {
        gm_plot_point *lo = &set->points[i];
        for (int j = 0; lo->band[0] && !lo->dashed && j < set->n_points; j++) {
            const gm_plot_point *hi = &set->points[j];
            if (hi->dashed && hi->x == lo->x && !strcmp(hi->band, lo->band) && !strcmp(hi->panel, lo->panel)) {
                lo->has_hi = 1;
                lo->y_hi = hi->y;
                break;
            }
        }
    }
    return 0;
}

void gm_plot_set_free(gm_plot_set *set)
{
    free(set->points);
    set->points = NULL;
    set->n_points = 0;
}

/* A panel's file base.PANEL.SUFFIX, opened for writing into *f; its
 * name in path. Returns 0, or -1 with err naming it. */
static int panel_file_open(const char *base, const char *panel, const char *suffix, char *path, size_t path_len,
                           FILE **f, char *err, size_t len)
{
    snprintf(path, path_len, "%s.%s.%s", base, panel, suffix);
    *f = fopen(path, "w");
    if (!*f)
        snprintf(err, len, "cannot write %s", path);
    return *f ? 0 : -1;
}

/* Closes a panel's file: 0, or -1 with err naming it (a failed write shows here). */
static int panel_file_close(FILE *f, const char *path, char *err, size_t len)
{
    if (fclose(f) == 0)
        return 0;
    snprintf(err, len, "cannot write %s", path);
    return -1;
}

/* Whether point pt starts or continues a block of a panel's file: 0 solid,
 * 1 dashed (gm_plot_write), 2 band (write_bands); *name is what a block
 * holds one of. */
static int in_file(const gm_plot_point *pt, const char *panel, int file, const char **name)
{
    *name = file == 2 ? pt->band : pt->series;
    if (pt->off_axis || strcmp(pt->panel, panel) != 0)
        return 0;
    return file == 2 ? pt->has_hi : pt->dashed == file;
}

/* base.PANEL.band.dat: for each band, "x low high" lines. Not written
 * when the panel has no band. */
static int write_bands(const gm_plot_set *set, const char *base, const char *panel, char *err, size_t len)
{
    int any = 0;
    const char *current = NULL, *name;
    for (int i = 0; i < set->n_points && !any; i++)
        any = in_file(&set->points[i], panel, 2, &name);
    if (!any)
        return 0;
    char path[4400];
    FILE *f;
    if (panel_file_open(base, panel, "band.dat", path, sizeof path, &f, err, len) != 0)
        return -1;
    for (int i = 0; i < set->n_points; i++) {
        const gm_plot_point *pt = &set->points[i];
        if (!in_file(pt, panel, 2, &name))
            continue;
        if (!current || strcmp(current, pt->band) != 0) {
            fprintf(f, "%s\"%s p50-p99\" low high\n", current ? "\n\n" : "", pt->band);
            current = pt->band;
        }
        fprintf(f, "%.17g %.17g %.17g\n", pt->x, pt->y, pt->y_hi);
    }
    return panel_file_close(f, path, err, len);
}

/* Whether point q belongs to the series `series` of the panel, solid or dashed. */
static int same_series(const gm_plot_point *q, const char *panel, int dashed, const char *series)
{
    return q->dashed == dashed && !strcmp(q->panel, panel) && !strcmp(q->series, series);
}

/* " (0 at X1, X2)": where the series of point pt (in its panel, solid or
 * dashed) has points off the axis, beside those it draws; "" where none.
 * Returns buf. */
static const char *off_axis_xs(const gm_plot_set *set, const gm_plot_point *pt, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < set->n_points && used + 24 < len; i++) {
        const gm_plot_point *q = &set->points[i];
        if (q->off_axis && same_series(q, pt->panel, pt->dashed, pt->series))
            used += (size_t)snprintf(buf + used, len - used, "%s%g", used ? ", " : " (0 at ", q->x);
    }
    if (used)
        snprintf(buf + used, len - used, ")");
    return buf;
}

/* Whether the panel's series has a point on the axes. */
static int series_drawn(const gm_plot_set *set, const char *panel, const char *series, int dashed)
{
    for (int i = 0; i < set->n_points; i++)
        if (!set->points[i].off_axis && same_series(&set->points[i], panel, dashed, series))
            return 1;
    return 0;
}

/* base.PANEL.off: the panel's solid series with no point on the axes, each
 * in double quotes (a quote in a name becomes an apostrophe). */
static int write_off_axis(const gm_plot_set *set, const char *base, const char *panel, char *err, size_t len)
{
    char path[4400];
    FILE *f;
    if (panel_file_open(base, panel, "off", path, sizeof path, &f, err, len) != 0)
        return -1;
    const char *current = NULL;
    for (int i = 0; i < set->n_points; i++) {
        const gm_plot_point *pt = &set->points[i];
        if (pt->dashed || strcmp(pt->panel, panel) != 0 || (current && !strcmp(current, pt->series)))
            continue;
        current = pt->series;       /* points are sorted: each series once */
        if (series_drawn(set, panel, pt->series, 0))
            continue;
        fputc('"', f);
        for (const char *c = pt->series; *c; c++)
            fputc(*c == '"' ? '\'' : *c, f);
        fputs("\" ", f);
    }
    return panel_file_close(f, path, err, len);
}

/* The index of key among keys[0..n-1]; n where it is not there. */
static int key_index(const char *const *keys, int n, const char *key)
{
    int k = 0;
    while (k < n && strcmp(keys[k], key) != 0)
        k++;
    return k;
}

/* base.PANEL.colours: for the solid, dashed and band files, a line each of
 * their blocks' colour numbers: the rank of the block's colour key among
 * the panel's keys in the order points meet them. */
static int write_colours(const gm_plot_set *set, const char *base, const char *panel, char *err, size_t len)
{
    const char **keys = calloc((size_t)set->n_points + 1, sizeof *keys);
    char path[4400];
    FILE *f;
    if (!keys) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    if (panel_file_open(base, panel, "colours", path, sizeof path, &f, err, len) != 0) {
        free(keys);
        return -1;
    }
    int n_keys = 0;
    for (int i = 0; i < set->n_points; i++) {
        const gm_plot_point *pt = &set->points[i];
        if (!strcmp(pt->panel, panel) && key_index(keys, n_keys, pt->colour) == n_keys)
            keys[n_keys++] = pt->colour;
    }
    for (int file = 0; file < 3; file++) {
        const char *current = NULL, *name;
        for (int i = 0; i < set->n_points; i++) {
            if (!in_file(&set->points[i], panel, file, &name) || (current && !strcmp(current, name)))
                continue;
            current = name;
            fprintf(f, "%d ", key_index(keys, n_keys, set->points[i].colour));
        }
        fputc('\n', f);
    }
    free(keys);
    return panel_file_close(f, path, err, len);
}

int gm_plot_write(const gm_plot_set *set, const char *base, char *err, size_t len)
{
    for (int p = 0; p < set->n_panels; p++)
        if (write_bands(set, base, set->panels[p], err, len) != 0
            || write_off_axis(set, base, set->panels[p], err, len) != 0
            || write_colours(set, base, set->panels[p], err, len) != 0)
            return -1;
    for (int p = 0; p < set->n_panels; p++)
        for (int dashed = 0; dashed < 2; dashed++) {
            char path[4400];
            FILE *f;
            if (panel_file_open(base, set->panels[p], dashed ? "dashed.dat" : "dat", path, sizeof path, &f, err,
                                len) != 0)
                return -1;
            const char *current = NULL, *name;
            for (int i = 0; i < set->n_points; i++) {
                const gm_plot_point *pt = &set->points[i];
                if (!in_file(pt, set->panels[p], dashed, &name))
                    continue;
                if (!current || strcmp(current, pt->series) != 0) {
                    char off[96];
                    fprintf(f, "%s\"%s%s\" value\n", current ? "\n\n" : "", pt->series,
                            off_axis_xs(set, pt, off, sizeof off));
                    current = pt->series;
                }
                fprintf(f, "%.17g %.17g\n", pt->x, pt->y);
            }
            if (panel_file_close(f, path, err, len) != 0)
                return -1;
        }
    return 0;
}
