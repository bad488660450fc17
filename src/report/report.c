#include "report/report_parts.h"

#include "lib/units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(r, c) ((r)[d->col_##c])

void gm_report_headline(gm_report *r, const char *label, const char *fmt, ...)
{
    if (r->n_headline == GM_REPORT_MAX_ROWS)
        return;
    gm_report_row *row = &r->headline[r->n_headline++];
    snprintf(row->label, sizeof row->label, "%s", label);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row->value, sizeof row->value, fmt, ap);
    va_end(ap);
}

static int ok_row(const gm_plot_data *d, char **r, const char *suite, const char *metric)
{
    return strcmp(F(r, status), "ok") == 0 && strcmp(F(r, suite), suite) == 0 && strcmp(F(r, metric), metric) == 0
           && F(r, value)[0];
}

/* The first ok row of suite/metric (and workload, when given). */
static char **first(const gm_plot_data *d, const char *suite, const char *metric, const char *workload)
{
    for (int i = 0; i < d->n_rows; i++)
        if (ok_row(d, d->fields[i], suite, metric) && (!workload || strcmp(F(d->fields[i], workload), workload) == 0))
            return d->fields[i];
    return NULL;
}

static void memory_rows(gm_report *rep, const gm_plot_data *d)
{
    char **total = first(d, "oom", "largest_total", "alloc"), **single = first(d, "oom", "largest_alloc", "alloc");
    char a[32], b[32], label[200];
    if (total && single) {
        snprintf(label, sizeof label, "usable memory: largest total / largest single allocation%s",
                 strstr(F(single, note), "under the cap") ? " (under the run's cap)" : "");
        gm_report_headline(rep, label, "%s / %s", gm_format_size((uint64_t)atof(F(total, value)), a, sizeof a),
                           gm_format_size((uint64_t)atof(F(single, value)), b, sizeof b));
    }
}

static void bandwidth_row(gm_report *rep, const gm_plot_data *d)
{
    char **best = NULL;
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i];
        if (ok_row(d, r, "stream", "bandwidth") && (!best || atof(F(r, value)) > atof(F(best, value))))
            best = r;
    }
    char sz[32];
    if (best)
        gm_report_headline(rep, "peak bandwidth (stream)", "%.1f GB/s (%s, %s, %s)", atof(F(best, value)),
                           F(best, workload), F(best, precision),
                           gm_format_size((uint64_t)atof(F(best, bytes)), sz, sizeof sz));
}

/* Pinned host-to-device transfer latency at the blocks nearest 4KiB and
 * 64MiB (by ratio), p50 and p99. */
static void latency_rows(gm_report *rep, const gm_plot_data *d)
{
    static const double targets[] = {4096.0, 67108864.0};
    char **chosen[2] = {NULL, NULL};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < d->n_rows; i++) {
            char **r = d->fields[i];
            if (!ok_row(d, r, "swap", "latency_p50") || strcmp(F(r, workload), "transfer") != 0
                || strcmp(F(r, pattern), "pinned") != 0 || strcmp(F(r, variant), "h2d") != 0)
                continue;
            double off = fabs(log(atof(F(r, bytes)) / targets[t]));
            if (!chosen[t] || off < fabs(log(atof(F(chosen[t], bytes)) / targets[t])))
                chosen[t] = r;
        }
    if (chosen[1] == chosen[0])
        chosen[1] = NULL;
    for (int t = 0; t < 2 && chosen[t]; t++) {
        char **r = chosen[t], **p99 = NULL, sz[32], label[200];
        for (int i = 0; i < d->n_rows && !p99; i++) {
            char **q = d->fields[i];
            if (ok_row(d, q, "swap", "latency_p99") && !strcmp(F(q, workload), "transfer")
                && !strcmp(F(q, pattern), "pinned") && !strcmp(F(q, variant), "h2d")
                && !strcmp(F(q, bytes), F(r, bytes)))
                p99 = q;
        }
        snprintf(label, sizeof label, "transfer latency, pinned host to device, %s: p50%s",
                 gm_format_size((uint64_t)atof(F(r, bytes)), sz, sizeof sz), p99 ? " / p99" : "");
        if (p99)
            gm_report_headline(rep, label, "%.1f µs / %.1f µs", atof(F(r, value)), atof(F(p99, value)));
        else
            gm_report_headline(rep, label, "%.1f µs", atof(F(r, value)));
    }
}

static void batch_rows(gm_report *rep, const gm_plot_data *d)
{
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i];
        if (!ok_row(d, r, "oom", "max_batch"))
            continue;
        char **model = NULL;
        for (int j = i + 1; j < d->n_rows && !model; j++) {
            char **m = d->fields[j];
            if (ok_row(d, m, "oom", "max_batch_model") && !strcmp(F(m, workload), F(r, workload))
                && !strcmp(F(m, variant), F(r, variant)) && !strcmp(F(m, precision), F(r, precision))
                && !strcmp(F(m, pattern), F(r, pattern)) && !strcmp(F(m, seq), F(r, seq)))
                model = m;
        }
        char label[200];
        snprintf(label, sizeof label, "largest batch: %s %s %s, seq %s, %s", F(r, workload), F(r, variant),
                 F(r, precision), F(r, seq), F(r, pattern));
        if (model)
            gm_report_headline(rep, label, "%s (model: %s)", F(r, value), F(model, value));
        else
            gm_report_headline(rep, label, "%s", F(r, value));
    }
}

void gm_report_collect(const gm_plot_data *d, const char *run, gm_report *r)
{
    memset(r, 0, sizeof *r);
    const char *name = strrchr(run, '/') ? strrchr(run, '/') + 1 : run;
    snprintf(r->title, sizeof r->title, "gpumem run %s", name);
    if (d->n_rows)
        snprintf(r->device, sizeof r->device, "%s (%s)", d->fields[0][d->col_device], d->fields[0][d->col_backend]);
    gm_report_facts(run, r);
    memory_rows(r, d);
    bandwidth_row(r, d);
    latency_rows(r, d);
    batch_rows(r, d);
    gm_report_stress(run, r);
}

void gm_md_cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else
            fputc(*s, f);
    }
}

static void md_table(FILE *f, const char *head, const gm_report_row *rows, int n)
{
    fprintf(f, "%s\n\n| measure | value |\n| --- | --- |\n", head);
    for (int i = 0; i < n; i++) {
        fputs("| ", f);
        gm_md_cell(f, rows[i].label);
        fputs(" | ", f);
        gm_md_cell(f, rows[i].value);
        fputs(" |\n", f);
    }
    fputs("\n", f);
}

static int write_md(const gm_report *r, const char *run, const char *const *plots, int n_plots, char *err, size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/report.md", run);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, len, "cannot write %s", path);
        return -1;
    }
    fprintf(f, "# %s\n\n", r->title);
    if (r->device[0])
        fprintf(f, "Device: %s.\n\n", r->device);
    if (r->facts_note[0])
        fprintf(f, "%s\n\n", r->facts_note);
    if (r->n_facts)
        md_table(f, "## Device and run", r->facts, r->n_facts);
    md_table(f, "## Headline numbers", r->headline, r->n_headline);
    if (n_plots)
        fprintf(f, "## Plots\n\n");
    for (int i = 0; i < n_plots; i++)
        fprintf(f, "![%s](plots/%s.svg)\n\n", plots[i], plots[i]);
    if (fclose(f) != 0) {
        snprintf(err, len, "cannot write %s", path);
        return -1;
    }
    return 0;
}

int gm_report_write(const gm_plot_data *d, const char *run, const char *const *plots, int n_plots, char *err,
                    size_t len)
{
    gm_report *r = malloc(sizeof *r);
    if (!r) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    gm_report_collect(d, run, r);
    int rc = write_md(r, run, plots, n_plots, err, len);
    if (rc == 0)
        rc = gm_report_write_html(r, run, plots, n_plots, err, len);
    free(r);
    return rc;
}
