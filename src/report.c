#include "report.h"

#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(r, c) ((r)[d->col_##c])

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

static void memory_rows(FILE *f, const gm_plot_data *d)
{
    char **total = first(d, "oom", "largest_total", "alloc"), **single = first(d, "oom", "largest_alloc", "alloc");
    char a[32], b[32];
    if (total && single)
        fprintf(f, "| usable memory: largest total / largest single allocation%s | %s / %s |\n",
                strstr(F(single, note), "under the cap") ? " (under the run's cap)" : "",
                gm_format_size((uint64_t)atof(F(total, value)), a, sizeof a),
                gm_format_size((uint64_t)atof(F(single, value)), b, sizeof b));
}

static void bandwidth_row(FILE *f, const gm_plot_data *d)
{
    char **best = NULL;
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i];
        if (ok_row(d, r, "stream", "bandwidth") && (!best || atof(F(r, value)) > atof(F(best, value))))
            best = r;
    }
    char sz[32];
    if (best)
        fprintf(f, "| peak bandwidth (stream) | %.1f GB/s (%s, %s, %s) |\n", atof(F(best, value)), F(best, workload),
                F(best, precision), gm_format_size((uint64_t)atof(F(best, bytes)), sz, sizeof sz));
}

/* Pinned host-to-device latency at the smallest and the largest block. */
static void latency_rows(FILE *f, const gm_plot_data *d)
{
    char **lo = NULL, **hi = NULL;
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i];
        if (!ok_row(d, r, "swap", "latency_p50") || strcmp(F(r, workload), "transfer") != 0
            || strcmp(F(r, pattern), "pinned") != 0 || strcmp(F(r, variant), "h2d") != 0)
            continue;
        if (!lo || atof(F(r, bytes)) < atof(F(lo, bytes)))
            lo = r;
        if (!hi || atof(F(r, bytes)) > atof(F(hi, bytes)))
            hi = r;
    }
    char sz[32];
    for (int k = 0; k < 2 && lo; k++) {
        char **r = k ? hi : lo;
        if (k && hi == lo)
            break;
        fprintf(f, "| transfer latency p50, pinned host to device, %s | %.1f µs |\n",
                gm_format_size((uint64_t)atof(F(r, bytes)), sz, sizeof sz), atof(F(r, value)));
    }
}

static void batch_rows(FILE *f, const gm_plot_data *d)
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
        fprintf(f, "| largest batch: %s %s %s, seq %s, %s | %s", F(r, workload), F(r, variant), F(r, precision),
                F(r, seq), F(r, pattern), F(r, value));
        if (model)
            fprintf(f, " (model: %s)", F(model, value));
        fprintf(f, " |\n");
    }
}

int gm_report_write(const gm_plot_data *d, const char *run, const char *const *plots, int n_plots, char *err,
                    size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/report.md", run);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, len, "cannot write %s", path);
        return -1;
    }
    const char *name = strrchr(run, '/') ? strrchr(run, '/') + 1 : run;
    fprintf(f, "# gpumem run %s\n\n", name);
    if (d->n_rows)
        fprintf(f, "Device: %s (%s).\n\n", d->fields[0][d->col_device], d->fields[0][d->col_backend]);
    fprintf(f, "## Headline numbers\n\n| measure | value |\n| --- | --- |\n");
    memory_rows(f, d);
    bandwidth_row(f, d);
    latency_rows(f, d);
    batch_rows(f, d);
    if (n_plots)
        fprintf(f, "\n## Plots\n\n");
    for (int i = 0; i < n_plots; i++)
        fprintf(f, "![%s](plots/%s.svg)\n\n", plots[i], plots[i]);
    if (fclose(f) != 0) {
        snprintf(err, len, "cannot write %s", path);
        return -1;
    }
    return 0;
}
