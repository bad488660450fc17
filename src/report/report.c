#include "report/report_parts.h"

#include "lib/units.h"

#include <stdint.h>

#include <math.h>
#include <stdarg.h>
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

/* Usable memory: the largest total and single allocation, as bytes and as
 * a share of what the device advertises (and of the oom suite's cap, which
 * bounded it, where it ran under one). Sets the memory answer. */
uint64_t gm_report_oom_cap(const gm_plot_data *d)
{
    return oom_cap(d, first(d, "oom", "largest_alloc", "alloc"));
}

static void memory_rows(gm_report *rep, const gm_plot_data *d, const gm_report_meta *meta)
{
    char **total = first(d, "oom", "largest_total", "alloc"), **single = first(d, "oom", "largest_alloc", "alloc");
    if (!total)
        return;
    char a[32], b[32] = "", c[32], shares[200] = "";
    uint64_t usable = (uint64_t)atof(F(total, value)), cap = oom_cap(d, single);
    int n = 0;
    if (cap)
        n = snprintf(shares, sizeof shares, "%.1f%% of the oom suite's %s cap", 100.0 * (double)usable / (double)cap,
                     gm_format_size(cap, c, sizeof c));
    if (meta->total_mem && n >= 0 && (size_t)n < sizeof shares)
        snprintf(shares + n, sizeof shares - (size_t)n, "%s%.1f%% of the %s the device advertises", n ? ", " : "",
                 100.0 * (double)usable / (double)meta->total_mem, gm_format_size(meta->total_mem, c, sizeof c));
    gm_format_size(usable, a, sizeof a);
    gm_report_headline(rep, "usable memory: largest total", "%s (%llu bytes)%s%s", a, (unsigned long long)usable,
                       shares[0] ? ": " : "", shares);
    if (single)
        gm_report_headline(rep, "usable memory: largest single allocation", "%s",
                           gm_format_size((uint64_t)atof(F(single, value)), b, sizeof b));
    gm_report_answer *ans = &rep->answers[GM_ANSWER_MEMORY];
    snprintf(ans->label, sizeof ans->label, "How much memory is usable?");
    snprintf(ans->value, sizeof ans->value, "%s (%llu bytes) in total%s%s%s%s.%s", a, (unsigned long long)usable,
             shares[0] ? ": " : "", shares, single ? "; largest single block " : "", b,
             cap && meta->cpu ? " The cap is the run's, not the device's: a CPU device's memory is the host's own, "
                                "so the search stops there to keep the host out of its OOM killer (--mem-limit "
                                "sets it)." : "");
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

/* Device-memory bandwidth from arrays at least 4x the last-level cache (a
 * share of the theoretical peak where the memory clock and bus width are
 * known), and cache bandwidth from arrays below it, as separate rows. With
 * no last-level cache known, the largest arrays stand for device memory
 * and the value says so. Sets the speed answer's first part. */
static void bandwidth_rows(gm_report *rep, const gm_plot_data *d, const gm_report_meta *meta)
{
    char sz[32], llc[32], peak[160] = "";
    double largest = 0;
    for (int i = 0; i < d->n_rows; i++)
        if (ok_row(d, d->fields[i], "stream", "bandwidth") && atof(F(d->fields[i], bytes)) > largest)
            largest = atof(F(d->fields[i], bytes));
    if (largest <= 0)
        return;
    gm_report_answer *ans = &rep->answers[GM_ANSWER_SPEED];
    snprintf(ans->label, sizeof ans->label, "How fast is it?");
    const char *label = "device-memory bandwidth (stream, arrays >= 4x the last-level cache)";
    char **mem = best_stream(d, meta->llc ? 4.0 * (double)meta->llc : largest, 0);
    gm_format_size(meta->llc, llc, sizeof llc);
    if (!mem) {
        gm_report_headline(rep, label, "not measured: the largest array, %s, is under 4x the %s last-level cache",
                           gm_format_size((uint64_t)largest, sz, sizeof sz), llc);
        snprintf(ans->value, sizeof ans->value, "device memory not measured (arrays under 4x the %s cache)", llc);
    } else {
        double gbs = atof(F(mem, value));
        if (meta->mem_clock_mhz > 0 && meta->mem_bus_bits > 0) {
            /* DDR: two transfers a clock over the whole bus. */
            double model = 2.0 * meta->mem_clock_mhz * 1e6 * (meta->mem_bus_bits / 8.0) / 1e9;
            snprintf(peak, sizeof peak, "; %.0f%% of the theoretical peak %.0f GB/s (2 x %d MHz x %d bits / 8)",
                     100.0 * gbs / model, model, meta->mem_clock_mhz, meta->mem_bus_bits);
        }
        gm_format_size((uint64_t)atof(F(mem, bytes)), sz, sizeof sz);
        gm_report_headline(rep, label, "%.1f GB/s (%s %s, %s arrays%s%s)%s", gbs, F(mem, workload),
                           F(mem, precision), sz,
                           meta->llc ? "; last-level cache " : ", the largest; last-level cache unknown",
                           meta->llc ? llc : "", peak);
        snprintf(ans->value, sizeof ans->value, "device memory %.1f GB/s (%s %s, %s arrays)%s", gbs,
                 F(mem, workload), F(mem, precision), sz, peak);
    }
    char **cache = meta->llc ? best_stream(d, 0, (double)meta->llc) : NULL;
    if (cache) {
        gm_format_size((uint64_t)atof(F(cache, bytes)), sz, sizeof sz);
        gm_report_headline(rep, "cache bandwidth (stream, arrays below the last-level cache)",
                           "%.1f GB/s (%s %s, %s arrays)", atof(F(cache, value)), F(cache, workload),
                           F(cache, precision), sz);
        size_t used = strlen(ans->value);
        snprintf(ans->value + used, sizeof ans->value - used, "; cache %.1f GB/s", atof(F(cache, value)));
    }
}

static int pinned_transfer(const gm_plot_data *d, char **r)
{
    return ok_row(d, r, "swap", "bandwidth") && !strcmp(F(r, workload), "transfer")
           && !strcmp(F(r, pattern), "pinned");
}

/* Pinned host<->device bandwidth at the largest block, per direction. Adds
 * to the speed answer. */
static void transfer_rows(gm_report *rep, const gm_plot_data *d)
{
    double largest = 0;
    for (int i = 0; i < d->n_rows; i++)
        if (pinned_transfer(d, d->fields[i]) && atof(F(d->fields[i], bytes)) > largest)
            largest = atof(F(d->fields[i], bytes));
    if (largest <= 0)
        return;
    char value[200] = "", sz[32];
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i];
        size_t used = strlen(value);
        if (pinned_transfer(d, r) && atof(F(r, bytes)) == largest && used + 40 < sizeof value)
            snprintf(value + used, sizeof value - used, "%s%s %.1f GB/s", used ? ", " : "", F(r, variant),
                     atof(F(r, value)));
    }
    gm_format_size((uint64_t)largest, sz, sizeof sz);
    gm_report_headline(rep, "pinned host<->device bandwidth at the largest block", "%s (%s blocks)", value, sz);
    gm_report_answer *ans = &rep->answers[GM_ANSWER_SPEED];
    snprintf(ans->label, sizeof ans->label, "How fast is it?");
    size_t used = strlen(ans->value);
    snprintf(ans->value + used, sizeof ans->value - used, "%shost<->device (pinned, %s blocks) %s",
             used ? "; " : "", sz, value);
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

/* The optional column c of row r ("" where the run has none). */
static const char *opt_field(char *const *r, int c) { return c >= 0 ? r[c] : ""; }

/* Whether max_batch row r found that not even batch 1 fits. */
static int fits_nothing(const gm_plot_data *d, char *const *r) { return atof(F(r, value)) < 1; }

/* The words of max_batch row i: its point's name into name, "batch <=
 * B (model: B*)" or "does not fit: ..." into value. */
static void search_words(const gm_plot_data *d, int i, char *name, size_t name_len, char *value, size_t value_len)
{
    char **r = d->fields[i], **model = NULL;
    for (int j = i + 1; j < d->n_rows && !model; j++) {
        char **m = d->fields[j];
        if (ok_row(d, m, "oom", "max_batch_model") && !strcmp(F(m, workload), F(r, workload))
            && !strcmp(F(m, variant), F(r, variant)) && !strcmp(F(m, precision), F(r, precision))
            && !strcmp(F(m, pattern), F(r, pattern)) && !strcmp(F(m, seq), F(r, seq))
            && !strcmp(opt_field(m, d->col_mode), opt_field(r, d->col_mode))
            && !strcmp(opt_field(m, d->col_model), opt_field(r, d->col_model)))
            model = m;
    }
    gm_plot_point_name(d, r, name, name_len);
    int none = fits_nothing(d, r);
    snprintf(value, value_len, "%s%s%s%s%s", none ? "does not fit: batch 1 fails" : "batch <= ", none ? "" : F(r, value),
             model ? " (model: " : "", model ? F(model, value) : "", model ? ")" : "");
}

/* One row per search: "<model> <precision> <mode> <pattern>, seq S" for a
 * whole model ("llama-3-8b bf16 inference per-tensor, seq 4096"), else
 * "<workload> <implementation> <precision> <pattern>, seq S" ->
 * "batch <= B (model: B*)", B measured (allocated, run and verified), B*
 * what the memory model predicts; "does not fit: batch 1 fails (model:
 * B*)" where B is 0. The fit answer names the searches at
 * their longest sequence (four, those that fit nothing first, then a
 * count). */
static void batch_rows(gm_report *rep, const gm_plot_data *d)
{
    double longest = 0;
    for (int i = 0; i < d->n_rows; i++)
        if (ok_row(d, d->fields[i], "oom", "max_batch") && atof(F(d->fields[i], seq)) > longest)
            longest = atof(F(d->fields[i], seq));
    char label[200], value[120], name[100];
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i];
        if (!ok_row(d, r, "oom", "max_batch"))
            continue;
        search_words(d, i, name, sizeof name, value, sizeof value);
        snprintf(label, sizeof label, "largest batch: %s %s, seq %s", name, F(r, pattern), F(r, seq));
        gm_report_headline(rep, label, "%s", value);
    }
    /* The answer: the searches at the longest sequence, those that fit
     * nothing first (the news a reader must not miss), four at most. */
    gm_report_answer *ans = &rep->answers[GM_ANSWER_FIT];
    int listed = 0, more = 0;
    char capped[80] = "", cap_size[32];
    uint64_t cap = gm_report_oom_cap(d);
    if (cap)
        snprintf(capped, sizeof capped, "Under the oom suite's %s cap: ", gm_format_size(cap, cap_size, sizeof cap_size));
    for (int fits = 0; fits < 2; fits++)
        for (int i = 0; i < d->n_rows; i++) {
            char **r = d->fields[i];
            if (!ok_row(d, r, "oom", "max_batch") || atof(F(r, seq)) != longest || fits_nothing(d, r) == fits)
                continue;
            search_words(d, i, name, sizeof name, value, sizeof value);
            size_t used = strlen(ans->value);
            if (listed < 4 && used + 140 < sizeof ans->value) {
                snprintf(ans->value + used, sizeof ans->value - used, "%s%s %s, seq %s: %s", listed ? "; " : capped,
                         name, F(r, pattern), F(r, seq), value);
                listed++;
            } else {
                more++;
            }
        }
    if (listed) {
        snprintf(ans->label, sizeof ans->label, "Where do the models stop fitting?");
        size_t used = strlen(ans->value);
        if (more)
            snprintf(ans->value + used, sizeof ans->value - used, "; %d more in the table below", more);
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
    gm_report_meta meta;
    gm_report_meta_read(run, &meta);
    memory_rows(r, d, &meta);
    bandwidth_rows(r, d, &meta);
    transfer_rows(r, d);
    latency_rows(r, d);
    batch_rows(r, d);
    gm_report_serve(r, d);
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
    for (int i = 0; i < GM_ANSWERS; i++)
        if (r->answers[i].label[0])
            fprintf(f, "**%s** %s\n\n", r->answers[i].label, r->answers[i].value);
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
