/* Taking a run's figures from its results (report_figures.h). */
#include "report/report_figures.h"
#include "report/report.h"

#include "lib/units.h"
#include "run/point_key.h"

#include <math.h>
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

/* The cap the oom suite ran under, from its largest_alloc note ("under
 * the 64MiB cap"); 0 when uncapped or not said. */
static uint64_t oom_cap(const gm_plot_data *d, char **single)
{
    const char *at = single ? strstr(F(single, note), "under the ") : NULL;
    char word[32], err[100];
    uint64_t cap = 0;
    if (at && sscanf(at + 10, "%31s", word) == 1 && gm_parse_size(word, &cap, err, sizeof err) != 0)
        cap = 0;
    return cap;
}

uint64_t gm_report_oom_cap(const gm_plot_data *d)
{
    return oom_cap(d, first(d, "oom", "largest_alloc", "alloc"));
}

static void memory(const gm_plot_data *d, gm_report_figures *f)
{
    char **total = first(d, "oom", "largest_total", "alloc"), **single = first(d, "oom", "largest_alloc", "alloc");
    f->cap = oom_cap(d, single);
    if (!total)
        return;
    f->has_usable = true;
    f->usable = (uint64_t)atof(F(total, value));
    f->has_block = single != NULL;
    f->block = single ? (uint64_t)atof(F(single, value)) : 0;
}

/* The best stream bandwidth among arrays of at least `lo` bytes and below
 * `hi` (0: no bound). */
static char **best_stream(const gm_plot_data *d, double lo, double hi)
{
    char **best = NULL;
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i];
        double bytes = atof(F(r, bytes));
        if (ok_row(d, r, "stream", "bandwidth") && bytes >= lo && (hi <= 0 || bytes < hi)
            && (!best || atof(F(r, value)) > atof(F(best, value))))
            best = r;
    }
    return best;
}

/* Stream row r (NULL: none) as a figure. */
static void take_stream(const gm_plot_data *d, char **r, gm_fig_stream *s)
{
    if (!r)
        return;
    s->has = true;
    s->gbs = atof(F(r, value));
    s->bytes = (uint64_t)atof(F(r, bytes));
    snprintf(s->kernel, sizeof s->kernel, "%s", F(r, workload));
    snprintf(s->precision, sizeof s->precision, "%s", F(r, precision));
}

static void bandwidth(const gm_plot_data *d, gm_report_figures *f)
{
    double largest = 0;
    for (int i = 0; i < d->n_rows; i++)
        if (ok_row(d, d->fields[i], "stream", "bandwidth") && atof(F(d->fields[i], bytes)) > largest)
            largest = atof(F(d->fields[i], bytes));
    if (largest <= 0)
        return;
    f->largest_stream = (uint64_t)largest;
    take_stream(d, best_stream(d, f->llc ? 4.0 * (double)f->llc : largest, 0), &f->mem);
    /* DDR: two transfers a clock over the whole bus. */
    if (f->mem.has && f->mem_clock_mhz > 0 && f->mem_bus_bits > 0)
        f->peak_gbs = 2.0 * f->mem_clock_mhz * 1e6 * (f->mem_bus_bits / 8.0) / 1e9;
    take_stream(d, f->llc ? best_stream(d, 0, (double)f->llc) : NULL, &f->cache);
}

static int pinned_transfer(const gm_plot_data *d, char **r, const char *metric)
{
    return ok_row(d, r, "swap", metric) && !strcmp(F(r, workload), "transfer") && !strcmp(F(r, pattern), "pinned");
}

static void transfers(const gm_plot_data *d, gm_report_figures *f)
{
    double largest = 0;
    for (int i = 0; i < d->n_rows; i++)
        if (pinned_transfer(d, d->fields[i], "bandwidth") && atof(F(d->fields[i], bytes)) > largest)
            largest = atof(F(d->fields[i], bytes));
    f->transfer_bytes = (uint64_t)largest;
    for (int i = 0; i < d->n_rows && largest > 0 && f->n_transfers < GM_FIG_MAX_TRANSFERS; i++) {
        char **r = d->fields[i];
        if (pinned_transfer(d, r, "bandwidth") && atof(F(r, bytes)) == largest) {
            snprintf(f->transfers[f->n_transfers].direction, sizeof f->transfers[0].direction, "%s", F(r, variant));
            f->transfers[f->n_transfers++].gbs = atof(F(r, value));
        }
    }
}

/* Pinned host-to-device latency rows (metric) of the block nearest
 * target (by ratio), the first of equals; NULL where there is none. */
static char **nearest_latency(const gm_plot_data *d, double target)
{
    char **chosen = NULL;
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i];
        if (!pinned_transfer(d, r, "latency_p50") || strcmp(F(r, variant), "h2d") != 0)
            continue;
        double off = fabs(log(atof(F(r, bytes)) / target));
        if (!chosen || off < fabs(log(atof(F(chosen, bytes)) / target)))
            chosen = r;
    }
    return chosen;
}

static void latencies(const gm_plot_data *d, gm_report_figures *f)
{
    static const double targets[] = {4096.0, 67108864.0};
    char **chosen[2] = {nearest_latency(d, targets[0]), nearest_latency(d, targets[1])};
    if (chosen[1] == chosen[0])
        chosen[1] = NULL;
    for (int t = 0; t < 2 && chosen[t]; t++) {
        char **r = chosen[t], **p99 = NULL;
        for (int i = 0; i < d->n_rows && !p99; i++) {
            char **q = d->fields[i];
            if (pinned_transfer(d, q, "latency_p99") && !strcmp(F(q, variant), "h2d")
                && !strcmp(F(q, bytes), F(r, bytes)))
                p99 = q;
        }
        f->latency[t] = (gm_fig_latency){true, (uint64_t)atof(F(r, bytes)), atof(F(r, value)),
                                         p99 ? atof(F(p99, value)) : NAN};
    }
}

/* A linear row of the vendor's GEMM (gm_point_card_role). */
static int vendor_gemm(const gm_plot_data *d, char **r)
{
    return ok_row(d, r, "workloads", "throughput") && !strcmp(F(r, workload), "linear")
           && !strcmp(gm_point_card_role(F(r, suite), F(r, workload), F(r, variant)), "vendor");
}

static void gemm(const gm_plot_data *d, gm_report_figures *f)
{
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i];
        if (!vendor_gemm(d, r))
            continue;
        int k = 0;
        while (k < f->n_gemm && strcmp(f->gemm[k].precision, F(r, precision)) != 0)
            k++;
        if (k == f->n_gemm && f->n_gemm == GM_FIG_MAX_GEMM)
            continue;
        if (k == f->n_gemm) {
            f->n_gemm++;
            snprintf(f->gemm[k].precision, sizeof f->gemm[k].precision, "%s", F(r, precision));
        } else if (atof(F(r, value)) <= f->gemm[k].value) {
            continue;
        }
        f->gemm[k].value = atof(F(r, value));
        snprintf(f->gemm[k].impl, sizeof f->gemm[k].impl, "%s", F(r, variant));
        snprintf(f->gemm[k].unit, sizeof f->gemm[k].unit, "%s", d->col_unit >= 0 ? r[d->col_unit] : "");
    }
}

/* The optional column c of row r ("" where the run has none). */
static const char *opt_field(char *const *r, int c) { return c >= 0 ? r[c] : ""; }

/* The memory model's prediction beside max_batch row i: the first
 * max_batch_model row after it of the same search. */
static char **model_of(const gm_plot_data *d, int i)
{
    char **r = d->fields[i];
    for (int j = i + 1; j < d->n_rows; j++) {
        char **m = d->fields[j];
        if (ok_row(d, m, "oom", "max_batch_model") && !strcmp(F(m, workload), F(r, workload))
            && !strcmp(F(m, variant), F(r, variant)) && !strcmp(F(m, precision), F(r, precision))
            && !strcmp(F(m, pattern), F(r, pattern)) && !strcmp(F(m, seq), F(r, seq))
            && !strcmp(opt_field(m, d->col_mode), opt_field(r, d->col_mode))
            && !strcmp(opt_field(m, d->col_model), opt_field(r, d->col_model)))
            return m;
    }
    return NULL;
}

static void searches(const gm_plot_data *d, gm_report_figures *f)
{
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i], **model;
        if (!ok_row(d, r, "oom", "max_batch"))
            continue;
        if (atof(F(r, seq)) > f->longest_seq)
            f->longest_seq = atof(F(r, seq));
        if (f->n_searches == GM_FIG_MAX_SEARCHES)
            continue;
        gm_fig_search *s = &f->searches[f->n_searches++];
        gm_plot_point_name(d, r, s->name, sizeof s->name);
        snprintf(s->pattern, sizeof s->pattern, "%s", F(r, pattern));
        snprintf(s->seq, sizeof s->seq, "%s", F(r, seq));
        snprintf(s->batch, sizeof s->batch, "%s", F(r, value));
        s->fits_nothing = atof(F(r, value)) < 1;
        model = model_of(d, i);
        snprintf(s->model, sizeof s->model, "%s", model ? F(model, value) : "");
    }
}

void gm_report_figures_collect(const gm_plot_data *d, const char *run, gm_report_figures *f)
{
    memset(f, 0, sizeof *f);
    if (d->n_rows) {
        snprintf(f->device, sizeof f->device, "%s", d->fields[0][d->col_device]);
        snprintf(f->backend, sizeof f->backend, "%s", d->fields[0][d->col_backend]);
    }
    gm_report_meta meta;
    gm_report_meta_read(run, &meta);
    f->advertised = meta.total_mem;
    f->llc = meta.llc;
    f->mem_clock_mhz = meta.mem_clock_mhz;
    f->mem_bus_bits = meta.mem_bus_bits;
    f->cpu = meta.cpu;
    memory(d, f);
    bandwidth(d, f);
    transfers(d, f);
    latencies(d, f);
    gemm(d, f);
    searches(d, f);
    gm_report_figures_stress(run, f);
}

const char *gm_fig_throughput(double value, const char *unit, char *buf, size_t len)
{
    if (value >= 1000 && unit[0] == 'G')
        snprintf(buf, len, "%.1f T%s", value / 1000, unit + 1);
    else
        snprintf(buf, len, "%.1f %s", value, unit);
    return buf;
}
