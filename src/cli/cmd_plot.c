/*
 * `gpumem plot RUN [--out DIR]`: renders a run folder's results.csv with
 * gnuplot, one script per kind of result (plots/KIND.gp, sharing
 * plots/style.gp), as PNG and SVG into RUN/plots (or DIR). A kind with no
 * rows in the run is left out. The data each script reads, and gnuplot's
 * logs, go into the subfolder data/ (KIND.PANEL.dat: one block per line of
 * the plot; report/plot_data.h, gm_plot_data_base).
 * Then writes RUN/report.md and report.html (src/report.h), showing the
 * plots when they went to RUN/plots. A run of several devices (`bench
 * --device all`: RUN/devices.csv) gets each device's folder rendered and
 * one report with a column per device.
 */
#include "cli/commands.h"
#include "cli/option_table.h"
#include "lib/units.h"
#include "report/plot_data.h"
#include "report/plot_memory.h"
#include "report/report.h"
#include "run/run_devices.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The command as gpumem's list, --help and the man page show it (cli/command.h). */
const gm_command gm_command_plot = {
    .name = "plot",
    .run = gm_cmd_plot,
    .options = GM_CMD_PLOT,
    .summary = "render a run folder's results as PNG and SVG plots (gnuplot)",
    .usage = "plot RUN [--out DIR]",
    .about = "Renders RUN/results.csv as PNG and SVG plots into RUN/plots (or DIR), gnuplot's data and logs in its "
        "subfolder data/, and writes RUN/report.md and RUN/report.html.",
    .exit_status = "0 success, 2 bad usage or input (a malformed results.csv or memory.csv), 4 the plots or "
        "the report could not be written (an unwritable folder, or gnuplot failed)",
    .positional = GM_POSITIONAL_DIR,
};

/* The memory-over-time plot from RUN/memory.csv. Returns 1 when drawn, 0
 * when the run has no trace (or held nothing); -1 with err when the trace
 * is malformed, -2 when the plot cannot be written. */
static int render_memory(const char *run, const char *dir, const gm_report_meta *meta, const gm_plot_data *data,
                         char *err, size_t len)
{
    char csv[4200], base[4300], dat[4400];
    snprintf(csv, sizeof csv, "%s/memory.csv", run);
    err[0] = '\0';
    if (gm_plot_data_base(dir, "memory", base, sizeof base, err, len) != 0)
        return -2;
    snprintf(dat, sizeof dat, "%s.all.dat", base);
    int points = 0;
    int rc = gm_plot_memory_write(csv, dat, &points, err, len);
    if (rc != 0)
        return rc;
    if (!points)
        return 0;
    gm_plot_set set = {.kind = "memory", .n_panels = 1, .n_points = points};
    snprintf(set.panels[0], sizeof set.panels[0], "all");
    if (meta->mem_limit)          /* the cap, drawn across the plot */
        snprintf(set.vars, sizeof set.vars, "cap=%llu;", (unsigned long long)meta->mem_limit);
    /* The oom suite's own cap (a profile's [oom] section), over its phase. */
    char caps[4400], label[64], sz[32];
    uint64_t oom_cap = gm_report_oom_cap(data);
    snprintf(caps, sizeof caps, "%s.caps.dat", base);
    remove(caps);
    snprintf(label, sizeof label, "oom suite's cap %s", gm_format_size(oom_cap, sz, sizeof sz));
    if (oom_cap && oom_cap != meta->mem_limit && gm_plot_memory_cap(dat, "oom", oom_cap, label, caps, err, len) < 0)
        return -2;
    if (gm_plot_render(&set, dir, err, len) != 0)
        return -2;
    printf("%s/memory.png %s/memory.svg\n", dir, dir);
    return 1;
}

/* Renders one run folder (RUN/results.csv) and writes its report;
 * returns the exit status. */
static int plot_run(const char *run, const char *out)
{
    char csv[4200], dir[4200], err[600] = "";
    snprintf(csv, sizeof csv, "%s/results.csv", run);
    snprintf(dir, sizeof dir, "%s", out ? out : run);
    if (!out)
        snprintf(dir, sizeof dir, "%s/plots", run);
    gm_plot_data data;
    if (gm_plot_data_load(csv, &data, err, sizeof err) != 0) {
        fprintf(stderr, "gpumem plot: %s\n", err);
        return GM_EXIT_USAGE;
    }
    /* From here on a failure is the output's: the plots or the report
     * could not be written (exit status 4). */
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "gpumem plot: cannot create %s: %s\n", dir, strerror(errno));
        gm_plot_data_free(&data);
        return GM_EXIT_OUTPUT;
    }
    int made = 0, rc = GM_EXIT_OK;
    const char *rendered[GM_PLOT_KINDS + 1];
    gm_report_meta meta;          /* the cache and the cap, marked on the plots where known */
    gm_report_meta_read(run, &meta);
    for (int k = 0; k < GM_PLOT_KINDS && rc == GM_EXIT_OK; k++) {
        gm_plot_set set;
        if (gm_plot_select(&data, k, &set) != 0 || set.n_points == 0) {
            gm_plot_set_free(&set);
            continue;                 /* nothing of this kind: no plot */
        }
        char base[4300];
        if (!strcmp(set.kind, "bandwidth") && meta.llc)
            snprintf(set.vars, sizeof set.vars, "llc=%llu;", (unsigned long long)meta.llc);
        if (gm_plot_data_base(dir, set.kind, base, sizeof base, err, sizeof err) != 0
            || gm_plot_write(&set, base, err, sizeof err) != 0) {
            rc = GM_EXIT_OUTPUT;
        } else if (gm_plot_render(&set, dir, err, sizeof err) != 0) {
            rc = GM_EXIT_OUTPUT;
        } else {
            printf("%s/%s.png %s/%s.svg\n", dir, set.kind, dir, set.kind);
            rendered[made++] = set.kind;
        }
        gm_plot_set_free(&set);
    }
    int drawn = rc == GM_EXIT_OK ? render_memory(run, dir, &meta, &data, err, sizeof err) : 0;
    if (drawn > 0)
        rendered[made++] = "memory";
    else if (drawn < 0)
        rc = drawn == -1 ? GM_EXIT_USAGE : GM_EXIT_OUTPUT;
    if (rc == GM_EXIT_OK && gm_report_write(&data, run, rendered, out ? 0 : made, err, sizeof err) != 0)
        rc = GM_EXIT_OUTPUT;
    else if (rc == GM_EXIT_OK)
        printf("%s/report.md\n", run);
    gm_plot_data_free(&data);
    if (rc != GM_EXIT_OK)
        fprintf(stderr, "gpumem plot: %s\n", err);
    else if (!made)
        fprintf(stderr, "gpumem plot: %s has no rows any plot shows\n", csv);
    return rc;
}

int gm_cmd_plot(int argc, char **argv)
{
    const char *run = NULL;
    gm_report_args args = {0};
    gm_opt_dest dest = {.report = &args};
    gm_cli_arg cli[64];
    int n = 0;
    bool help = false;
    char err[600];
    int rc = gm_option_split("plot", GM_CMD_PLOT, "unexpected argument", argc, argv, cli, 64, &n, &help);
    if (rc)
        return rc;
    if (help) {
        gm_command_help(stdout, &gm_command_plot);
        return GM_EXIT_OK;
    }
    for (int i = 0; i < n; i++) {
        if (!cli[i].opt && !run) {
            run = cli[i].value;
        } else if (!cli[i].opt) {
            fprintf(stderr, "gpumem plot: unexpected argument '%s' (usage: gpumem plot RUN [--out DIR])\n",
                    cli[i].value);
            return GM_EXIT_USAGE;
        } else if (gm_option_apply(cli[i].opt, &dest, cli[i].value, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem plot: %s\n", err);
            return GM_EXIT_USAGE;
        }
    }
    const char *out = args.out;
    if (!run) {
        fprintf(stderr, "gpumem plot: which run? (usage: gpumem plot RUN [--out DIR])\n");
        return GM_EXIT_USAGE;
    }
    gm_run_device devs[GM_REPORT_MAX_DEVICES];
    n = gm_run_devices(run, devs, GM_REPORT_MAX_DEVICES, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "gpumem plot: %s\n", err);
        return GM_EXIT_USAGE;
    }
    if (n == 0)
        return plot_run(run, out);
    /* A run of several devices: each device's folder, then one report
     * with a column per device. */
    rc = GM_EXIT_OK;
    for (int k = 0; k < n && rc == GM_EXIT_OK; k++) {
        char sub[4400];
        snprintf(sub, sizeof sub, "%s/%s", run, devs[k].folder);
        rc = plot_run(sub, NULL);
    }
    if (rc == GM_EXIT_OK && gm_report_write_devices(run, devs, n, err, sizeof err) != 0) {
        fprintf(stderr, "gpumem plot: %s\n", err);
        rc = GM_EXIT_OUTPUT;
    } else if (rc == GM_EXIT_OK) {
        printf("%s/report.md\n", run);
    }
    return rc;
}
