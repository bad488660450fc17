/*
 * `gpumem compare BASE NEW [MORE...]`: compares run folders point by point
 * (src/compare.h) and prints a terminal table, Markdown or CSV. With
 * --out DIR it also writes DIR/compare.md, DIR/compare.csv and overlay
 * plots (bandwidth by size, throughput by batch: one line per run and
 * series, plots/bandwidth.gp and plots/throughput.gp; the data gnuplot
 * reads in DIR/data/). With --gate the exit
 * status is 1 when any run regressed against BASE, the regressions listed
 * on stderr. Bad usage or input (a missing folder, a malformed CSV, named
 * by file and line) exits 2. A run named reference:NAME is the reference
 * run NAME kept with gpumem (results/reference/NAME in the source tree,
 * DATADIR/reference/NAME installed).
 */
#include "cli/commands.h"
#include "cli/option_table.h"
#include "analysis/compare.h"
#include "analysis/compare_output.h"
#include "lib/datafile.h"
#include "report/plot_data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The command as gpumem's list, --help and the man page show it (cli/command.h). */
const gm_command gm_command_compare = {
    .name = "compare",
    .run = gm_cmd_compare,
    .options = GM_CMD_COMPARE,
    .summary = "compare run folders point by point; --gate fails on a regression",
    .usage = "compare BASE NEW [MORE...] [OPTIONS]",
    .about = "Compares run folders point by point, each against BASE: medians, their ratio with a 95% interval, "
        "Welch's t test on the round medians of runs benched in rounds (Holm-corrected over the run's tests) and "
        "the smallest change it could detect. A run may be a group of runs, BASE1,BASE2,BASE3: their run medians "
        "are then the test's units. One run a side without rounds falls back to a Mann-Whitney U test on the "
        "repetitions, which cannot separate run-to-run noise. A run named reference:NAME is the reference run "
        "NAME of a real card kept with gpumem (gpumem info says where).",
    .exit_status = "0 success, 1 a regression under --gate, 2 bad usage or input (a missing folder, a cut or malformed "
        "CSV), 4 the comparison could not be written (stdout, or the --out folder)",
    .positional = GM_POSITIONAL_RUN,
};

#define MAX_RUNS 16

static void usage(FILE *f)
{
    gm_command_help(f, &gm_command_compare);
}

/* One overlay plot: kind k of every run, series prefixed with the run's label. */
static int overlay(gm_comparison *c, int k, const char *dir, int *made, char *err, size_t len)
{
    gm_plot_set all = {0};
    int rc = 0;
    for (int r = 0; r < c->n_runs && rc == 0; r++) {
        gm_plot_data d;
        gm_plot_set set;
        char csv[4200];
        snprintf(csv, sizeof csv, "%s/results.csv", c->runs[r].dir);
        if (gm_plot_data_load(csv, &d, err, len) != 0)
            return -1;
        if (gm_plot_select(&d, k, &set) != 0) {
            gm_plot_data_free(&d);
            snprintf(err, len, "out of memory");
            return -1;
        }
        all.kind = set.kind;
        gm_plot_point *p = realloc(all.points, (size_t)(all.n_points + set.n_points + 1) * sizeof *p);
        if (!p) {
            snprintf(err, len, "out of memory");
            rc = -1;
        } else {
            all.points = p;
            for (int i = 0; i < set.n_points; i++) {
                gm_plot_point *q = &all.points[all.n_points++];
                *q = set.points[i];
                snprintf(q->series, sizeof q->series, "%.60s: %.60s", c->runs[r].label, set.points[i].series);
                snprintf(q->colour, sizeof q->colour, "%.60s: %.60s", c->runs[r].label, set.points[i].colour);
                int j = 0;
                while (j < all.n_panels && strcmp(all.panels[j], q->panel) != 0)
                    j++;
                if (j == all.n_panels && all.n_panels < GM_PLOT_MAX_PANELS)
                    snprintf(all.panels[all.n_panels++], sizeof all.panels[0], "%s", q->panel);
            }
        }
        gm_plot_set_free(&set);
        gm_plot_data_free(&d);
    }
    if (rc == 0 && all.n_points > 0) {
        char base[4300];
        if (gm_plot_data_base(dir, all.kind, base, sizeof base, err, len) != 0 || gm_plot_write(&all, base, err, len) != 0
            || gm_plot_render(&all, dir, err, len) != 0)
            rc = -1;
        else
            (*made)++;
    }
    gm_plot_set_free(&all);
    return rc;
}

static int write_outputs(gm_comparison *c, const char *dir, char *err, size_t len)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, len, "--out: cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    for (int markdown = 1; markdown >= 0; markdown--) {
        char path[4200];
        snprintf(path, sizeof path, "%s/compare.%s", dir, markdown ? "md" : "csv");
        FILE *f = fopen(path, "w");
        int bad = !f || (markdown ? gm_compare_print_report(f, c, 1) : gm_compare_print_csv(f, c)) != 0;
        if ((f && fclose(f) != 0) || bad) {
            snprintf(err, len, "cannot write %.1000s", path);
            return -1;
        }
    }
    int made = 0;
    for (int k = 0; k < 2; k++)                /* bandwidth by size, throughput by batch */
        if (overlay(c, k, dir, &made, err, len) != 0)
            return -1;
    return 0;
}

/* A folder, or a group of folders "A,B,C" (compare.h), each a
 * directory: 0, else -1 with the one that is not in err. */
static int check_folders(const char *arg, char *err, size_t len)
{
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    for (const char *at = arg; strchr(arg, ',') && *at;) {
        size_t n = strcspn(at, ",");
        char one[4096];
        snprintf(one, sizeof one, "%.*s", (int)n, at);
        if (stat(one, &st) != 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, len, "%.1000s: not a run folder", one);
            return -1;
        }
        at += n + (at[n] == ',');
    }
    if (!strchr(arg, ','))
        snprintf(err, len, "%.1000s: not a run folder", arg);
    return strchr(arg, ',') ? 0 : -1;
}

/* A run argument (a folder, or a group "A,B,C") with each reference:NAME
 * in it replaced by the folder of reference run NAME (reference/NAME/ of
 * the data folders, lib/datafile.h), into out. Returns 0, or -1 with err
 * naming the reference that is not there and those that are. */
#define REFERENCE_PREFIX "reference:"
static int resolve_references(const char *arg, char *out, size_t len, char *err, size_t err_len)
{
    size_t used = 0;
    out[0] = '\0';
    for (const char *at = arg;;) {
        size_t n = strcspn(at, ",");
        char part[4200];
        snprintf(part, sizeof part, "%.*s", (int)n, at);
        if (strncmp(part, REFERENCE_PREFIX, strlen(REFERENCE_PREFIX)) == 0) {
            const char *name = part + strlen(REFERENCE_PREFIX);
            char rel[300], path[4200];
            snprintf(rel, sizeof rel, "reference/%.200s", name);
            if (!*name || strchr(name, '/') || !gm_find_data_file(rel, path, sizeof path)) {
                char names[64][GM_DATA_NAME_LEN], list[1200] = "";
                int k = gm_data_file_names("reference", NULL, names, 64);
                for (int i = 0; i < k; i++)
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
                snprintf(err, err_len, "%.300s: no such reference run (%s%s)", part, k ? "there are: " : "none found",
                         list);
                return -1;
            }
            snprintf(part, sizeof part, "%s", path);
        }
        used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s%s", used ? "," : "", part);
        if (used >= len) {
            snprintf(err, err_len, "%.300s: too long", arg);
            return -1;
        }
        if (!at[n])
            return 0;
        at += n + 1;
    }
}

int gm_cmd_compare(int argc, char **argv)
{
    static char resolved[MAX_RUNS][8192];
    const char *dirs[MAX_RUNS];
    int n_dirs = 0;
    gm_report_args args = {.format = "table", .threshold = 0.05, .alpha = 0.05};
    gm_opt_dest dest = {.report = &args};
    gm_cli_arg cli[64];
    int n_cli = 0;
    bool help = false;
    char err[1200];
    int rc = gm_option_split("compare", GM_CMD_COMPARE, "unexpected argument", argc, argv, cli, 64, &n_cli, &help);
    if (rc || help) {
        if (help)
            usage(stdout);
        return rc;
    }
    for (int i = 0; i < n_cli; i++) {
        if (!cli[i].opt && n_dirs < MAX_RUNS) {
            if (resolve_references(cli[i].value, resolved[n_dirs], sizeof resolved[n_dirs], err, sizeof err) != 0) {
                fprintf(stderr, "gpumem compare: %s\n", err);
                return GM_EXIT_USAGE;
            }
            dirs[n_dirs] = resolved[n_dirs];
            n_dirs++;
        } else if (!cli[i].opt) {
            fprintf(stderr, "gpumem compare: unexpected argument '%s' (at most %d run folders)\n", cli[i].value,
                    MAX_RUNS);
            return GM_EXIT_USAGE;
        } else if (gm_option_apply(cli[i].opt, &dest, cli[i].value, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem compare: %s\n", err);
            return GM_EXIT_USAGE;
        }
    }
    const char *out = args.out, *format = args.format;
    int gate = args.gate;
    double threshold = args.threshold, alpha = args.alpha;
    if (n_dirs < 2) {
        fprintf(stderr, "gpumem compare: needs two run folders or more (usage: gpumem compare BASE NEW [MORE...])\n");
        return GM_EXIT_USAGE;
    }
    gm_cmp_run runs[MAX_RUNS];
    gm_comparison c = {.runs = runs, .threshold = threshold, .alpha = alpha};
    for (; c.n_runs < n_dirs; c.n_runs++) {
        if (check_folders(dirs[c.n_runs], err, sizeof err) != 0) {
            rc = GM_EXIT_USAGE;
            break;
        }
        if (gm_cmp_run_load(dirs[c.n_runs], &runs[c.n_runs], err, sizeof err) != 0) {
            c.n_runs++;                        /* what it loaded is freed below */
            rc = GM_EXIT_USAGE;
            break;
        }
    }
    if (rc == GM_EXIT_OK && gm_compare(&c) != 0) {
        snprintf(err, sizeof err, "out of memory");
        rc = GM_EXIT_USAGE;
    }
    if (rc == GM_EXIT_OK) {
        int bad = strcmp(format, "csv") == 0 ? gm_compare_print_csv(stdout, &c)
                                             : gm_compare_print_report(stdout, &c, strcmp(format, "markdown") == 0);
        fflush(stdout);
        if (bad) {
            snprintf(err, sizeof err, "cannot write the comparison to stdout");
            rc = GM_EXIT_OUTPUT;
        } else if (out && write_outputs(&c, out, err, sizeof err) != 0) {
            rc = GM_EXIT_OUTPUT;
        }
    }
    if (rc == GM_EXIT_OK && gate && c.n_regressions) {
        fprintf(stderr, "gpumem compare: %d regression%s against %s:\n", c.n_regressions,
                c.n_regressions == 1 ? "" : "s", runs[0].label);
        gm_compare_print_regressions(stderr, &c, "  ");
        rc = GM_EXIT_CHECK;
    } else if (rc == GM_EXIT_USAGE || rc == GM_EXIT_OUTPUT) {
        fprintf(stderr, "gpumem compare: %s\n", err);
    }
    gm_comparison_free(&c);
    for (int i = 0; i < c.n_runs; i++)
        gm_cmp_run_free(&runs[i]);
    return rc;
}
