#include "report/report_parts.h"

#include "lib/units.h"

#include <stdint.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Usable memory: the largest total and single allocation, as bytes and as
 * a share of what the device advertises (and of the oom suite's cap, which
 * bounded it, where it ran under one). Sets the memory answer. */
static void memory_rows(gm_report *rep, const gm_report_figures *f)
{
    if (!f->has_usable)
        return;
    char a[32], b[32] = "", c[32], shares[200] = "";
    int n = 0;
    if (f->cap)
        n = snprintf(shares, sizeof shares, "%.1f%% of the oom suite's %s cap",
                     100.0 * (double)f->usable / (double)f->cap, gm_format_size(f->cap, c, sizeof c));
    if (f->advertised && n >= 0 && (size_t)n < sizeof shares)
        snprintf(shares + n, sizeof shares - (size_t)n, "%s%.1f%% of the %s the device advertises", n ? ", " : "",
                 100.0 * (double)f->usable / (double)f->advertised, gm_format_size(f->advertised, c, sizeof c));
    gm_format_size(f->usable, a, sizeof a);
    gm_report_headline(rep, "usable memory: largest total", "%s (%llu bytes)%s%s", a,
                       (unsigned long long)f->usable, shares[0] ? ": " : "", shares);
    if (f->has_block)
        gm_report_headline(rep, "usable memory: largest single allocation", "%s",
                           gm_format_size(f->block, b, sizeof b));
    gm_report_answer *ans = &rep->answers[GM_ANSWER_MEMORY];
    snprintf(ans->label, sizeof ans->label, "How much memory is usable?");
    snprintf(ans->value, sizeof ans->value, "%s (%llu bytes) in total%s%s%s%s.%s", a, (unsigned long long)f->usable,
             shares[0] ? ": " : "", shares, f->has_block ? "; largest single block " : "", b,
             f->cap && f->cpu ? " The cap is the run's, not the device's: a CPU device's memory is the host's own, "
                                "so the search stops there to keep the host out of its OOM killer (--mem-limit "
                                "sets it)." : "");
}

/* Device-memory bandwidth from arrays at least 4x the last-level cache (a
 * share of the theoretical peak where the memory clock and bus width are
 * known), and cache bandwidth from arrays below it, as separate rows. With
 * no last-level cache known, the largest arrays stand for device memory
 * and the value says so. Sets the speed answer's first part. */
static void bandwidth_rows(gm_report *rep, const gm_report_figures *f)
{
    char sz[32], llc[32], peak[160] = "";
    if (!f->largest_stream)
        return;
    gm_report_answer *ans = &rep->answers[GM_ANSWER_SPEED];
    snprintf(ans->label, sizeof ans->label, "How fast is it?");
    const char *label = "device-memory bandwidth (stream, arrays >= 4x the last-level cache)";
    gm_format_size(f->llc, llc, sizeof llc);
    if (!f->mem.has) {
        gm_report_headline(rep, label, "not measured: the largest array, %s, is under 4x the %s last-level cache",
                           gm_format_size(f->largest_stream, sz, sizeof sz), llc);
        snprintf(ans->value, sizeof ans->value, "device memory not measured (arrays under 4x the %s cache)", llc);
    } else {
        if (f->peak_gbs > 0)
            snprintf(peak, sizeof peak, "; %.0f%% of the theoretical peak %.0f GB/s (2 x %d MHz x %d bits / 8)",
                     100.0 * f->mem.gbs / f->peak_gbs, f->peak_gbs, f->mem_clock_mhz, f->mem_bus_bits);
        gm_format_size(f->mem.bytes, sz, sizeof sz);
        gm_report_headline(rep, label, "%.1f GB/s (%s %s, %s arrays%s%s)%s", f->mem.gbs, f->mem.kernel,
                           f->mem.precision, sz,
                           f->llc ? "; last-level cache " : ", the largest; last-level cache unknown",
                           f->llc ? llc : "", peak);
        snprintf(ans->value, sizeof ans->value, "device memory %.1f GB/s (%s %s, %s arrays)%s", f->mem.gbs,
                 f->mem.kernel, f->mem.precision, sz, peak);
    }
    if (f->cache.has) {
        gm_format_size(f->cache.bytes, sz, sizeof sz);
        gm_report_headline(rep, "cache bandwidth (stream, arrays below the last-level cache)",
                           "%.1f GB/s (%s %s, %s arrays)", f->cache.gbs, f->cache.kernel, f->cache.precision, sz);
        size_t used = strlen(ans->value);
        snprintf(ans->value + used, sizeof ans->value - used, "; cache %.1f GB/s", f->cache.gbs);
    }
}

/* Pinned host<->device bandwidth at the largest block, per direction. Adds
 * to the speed answer. */
static void transfer_rows(gm_report *rep, const gm_report_figures *f)
{
    if (!f->n_transfers)
        return;
    char value[200] = "", sz[32];
    for (int i = 0; i < f->n_transfers; i++) {
        size_t used = strlen(value);
        snprintf(value + used, sizeof value - used, "%s%s %.1f GB/s", used ? ", " : "", f->transfers[i].direction,
                 f->transfers[i].gbs);
    }
    gm_format_size(f->transfer_bytes, sz, sizeof sz);
    gm_report_headline(rep, "pinned host<->device bandwidth at the largest block", "%s (%s blocks)", value, sz);
    gm_report_answer *ans = &rep->answers[GM_ANSWER_SPEED];
    snprintf(ans->label, sizeof ans->label, "How fast is it?");
    size_t used = strlen(ans->value);
    snprintf(ans->value + used, sizeof ans->value - used, "%shost<->device (pinned, %s blocks) %s",
             used ? "; " : "", sz, value);
}

/* Pinned host-to-device transfer latency at the blocks nearest 4KiB and
 * 64MiB (by ratio), p50 and p99. */
static void latency_rows(gm_report *rep, const gm_report_figures *f)
{
    for (int t = 0; t < 2 && f->latency[t].has; t++) {
        const gm_fig_latency *l = &f->latency[t];
        char sz[32], label[200];
        int p99 = !isnan(l->p99_us);
        snprintf(label, sizeof label, "transfer latency, pinned host to device, %s: p50%s",
                 gm_format_size(l->bytes, sz, sizeof sz), p99 ? " / p99" : "");
        if (p99)
            gm_report_headline(rep, label, "%.1f µs / %.1f µs", l->p50_us, l->p99_us);
        else
            gm_report_headline(rep, label, "%.1f µs", l->p50_us);
    }
}

/* The vendor GEMM's best throughput per precision, on one row. */
static void gemm_rows(gm_report *rep, const gm_report_figures *f)
{
    char value[400] = "", t[48];
    for (int i = 0; i < f->n_gemm; i++) {
        size_t used = strlen(value);
        snprintf(value + used, sizeof value - used, "%s%s %s (%s)", i ? ", " : "", f->gemm[i].precision,
                 gm_fig_throughput(f->gemm[i].value, f->gemm[i].unit, t, sizeof t), f->gemm[i].impl);
    }
    if (f->n_gemm)
        gm_report_headline(rep, "vendor GEMM: the best linear point of each precision", "%s", value);
}

/* A search's answer: "batch <= B (model: B*)" or "does not fit: batch 1
 * fails (model: B*)". */
static void search_value(const gm_fig_search *s, char *value, size_t len)
{
    snprintf(value, len, "%s%s%s%s%s", s->fits_nothing ? "does not fit: batch 1 fails" : "batch <= ",
             s->fits_nothing ? "" : s->batch, s->model[0] ? " (model: " : "", s->model, s->model[0] ? ")" : "");
}

/* One row per search: "<model> <precision> <mode> <pattern>, seq S" for a
 * whole model ("llama-3-8b bf16 inference per-tensor, seq 4096"), else
 * "<workload> <implementation> <precision> <pattern>, seq S" ->
 * "batch <= B (model: B*)", B measured (allocated, run and verified), B*
 * what the memory model predicts; "does not fit: batch 1 fails (model:
 * B*)" where B is 0. The fit answer names the searches at
 * their longest sequence, each model, precision and mode (or workload)
 * once, by its first pattern (six, those that fit nothing first, then a
 * count of the searches left to the table). */
/* Is search i's name that of a search before it at the longest
 * sequence that the answer lists first (fits nothing before fits)? */
static bool named_before(const gm_report_figures *f, int i)
{
    const gm_fig_search *s = &f->searches[i];
    for (int j = 0; j < f->n_searches; j++) {
        const gm_fig_search *o = &f->searches[j];
        if (j == i || atof(o->seq) != f->longest_seq || strcmp(o->name, s->name))
            continue;
        if (o->fits_nothing != s->fits_nothing ? o->fits_nothing : j < i)
            return true;
    }
    return false;
}

static void batch_rows(gm_report *rep, const gm_report_figures *f)
{
    char label[200], value[120];
    for (int i = 0; i < f->n_searches; i++) {
        const gm_fig_search *s = &f->searches[i];
        search_value(s, value, sizeof value);
        snprintf(label, sizeof label, "largest batch: %s %s, seq %s", s->name, s->pattern, s->seq);
        gm_report_headline(rep, label, "%s", value);
    }
    /* The answer: the searches at the longest sequence, those that fit
     * nothing first (the news a reader must not miss), one a name (so
     * that every mode of a model is heard before a second pattern of
     * one), six at most. */
    gm_report_answer *ans = &rep->answers[GM_ANSWER_FIT];
    int listed = 0, more = 0;
    char capped[80] = "", cap_size[32];
    if (f->cap)
        snprintf(capped, sizeof capped, "Under the oom suite's %s cap: ",
                 gm_format_size(f->cap, cap_size, sizeof cap_size));
    for (int fits = 0; fits < 2; fits++)
        for (int i = 0; i < f->n_searches; i++) {
            const gm_fig_search *s = &f->searches[i];
            if (atof(s->seq) != f->longest_seq || s->fits_nothing == fits)
                continue;
            search_value(s, value, sizeof value);
            size_t used = strlen(ans->value);
            if (listed < 6 && used + 140 < sizeof ans->value && !named_before(f, i)) {
                snprintf(ans->value + used, sizeof ans->value - used, "%s%s %s, seq %s: %s", listed ? "; " : capped,
                         s->name, s->pattern, s->seq, value);
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

static void stress_rows(gm_report *rep, const gm_report_figures *f)
{
    for (int i = 0; i < f->n_stress; i++) {
        char label[96];
        snprintf(label, sizeof label, "stress: %s", f->stress[i].name);
        gm_report_headline(rep, label, "%s", f->stress[i].ok ? "ok" : "FAILED");
    }
}

void gm_report_collect(const gm_plot_data *d, const char *run, gm_report *r)
{
    memset(r, 0, sizeof *r);
    const char *name = strrchr(run, '/') ? strrchr(run, '/') + 1 : run;
    snprintf(r->title, sizeof r->title, "gpumem run %s", name);
    gm_report_figures_collect(d, run, &r->fig);
    if (r->fig.device[0])
        snprintf(r->device, sizeof r->device, "%s (%s)", r->fig.device, r->fig.backend);
    gm_report_facts(run, r);
    memory_rows(r, &r->fig);
    bandwidth_rows(r, &r->fig);
    transfer_rows(r, &r->fig);
    latency_rows(r, &r->fig);
    gemm_rows(r, &r->fig);
    batch_rows(r, &r->fig);
    gm_report_serve(r, d);
    gm_report_verify(r, d, run);
    stress_rows(r, &r->fig);
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
