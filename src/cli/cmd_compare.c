/*
 * `gpumem compare BASE NEW [MORE...]`: compares run folders point by point
 * (src/compare.h) and prints a terminal table, Markdown or CSV. With
 * --out DIR it also writes DIR/compare.md, DIR/compare.csv and overlay
 * plots (bandwidth by size, throughput by batch: one line per run and
 * series, plots/bandwidth.gp and plots/throughput.gp). With --gate the exit
 * status is 1 when any run regressed against BASE, the regressions listed
 * on stderr. Bad usage or input (a missing folder, a malformed CSV, named
 * by file and line) exits 2.
 */
#include "cli/commands.h"
#include "analysis/compare.h"
#include "analysis/compare_output.h"
#include "report/plot_data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_RUNS 16

static const char usage_text[] =
    "usage: gpumem compare BASE NEW [MORE...] [--threshold PCT] [--alpha A] [--gate]\n"
    "                      [--format table|markdown|csv] [--out DIR]\n"
    "Compares run folders point by point, each against BASE: medians, their ratio with a 95%\n"
    "bootstrap interval, a Mann-Whitney U test on the samples (Holm-corrected over the run's tests).\n"
    "  --threshold PCT  a change counts only when larger than this, in the worse direction (5%)\n"
    "  --alpha A        significance level after Holm's correction (0.05)\n"
    "  --gate           exit 1 when any run regressed against BASE, listing the regressions\n"
    "  --format F       table (default), markdown or csv on stdout\n"
    "  --out DIR        also write DIR/compare.md, DIR/compare.csv and overlay plots (PNG, SVG)\n";

static int parse_fraction(const char *s, int percent, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno)
        return -1;
    if (percent && *end == '%')
        end++;
    if (*end || !(v > 0))
        return -1;
    *out = percent ? v / 100 : v;
    return *out < max ? 0 : -1;
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
        snprintf(base, sizeof base, "%s/%s", dir, all.kind);
        if (gm_plot_write(&all, base, err, len) != 0 || gm_plot_render(&all, dir, err, len) != 0)
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
        snprintf(err, len, "cannot create %s: %s", dir, strerror(errno));
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

int gm_cmd_compare(int argc, char **argv)
{
    const char *dirs[MAX_RUNS], *out = NULL, *format = "table";
    int n_dirs = 0, gate = 0;
    double threshold = 0.05, alpha = 0.05;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            return GM_EXIT_OK;
        } else if (strcmp(a, "--gate") == 0) {
            gate = 1;
        } else if (strcmp(a, "--threshold") == 0 && v) {
            if (parse_fraction(v, 1, 10, &threshold) != 0) {
                fprintf(stderr, "gpumem compare: --threshold '%s': a percentage above 0, such as 5%%\n", v);
                return GM_EXIT_USAGE;
            }
            i++;
        } else if (strcmp(a, "--alpha") == 0 && v) {
            if (parse_fraction(v, 0, 1, &alpha) != 0) {
                fprintf(stderr, "gpumem compare: --alpha '%s': a level between 0 and 1, such as 0.05\n", v);
                return GM_EXIT_USAGE;
            }
            i++;
        } else if (strcmp(a, "--format") == 0 && v) {
            format = argv[++i];
            if (strcmp(format, "table") && strcmp(format, "markdown") && strcmp(format, "csv")) {
                fprintf(stderr, "gpumem compare: --format '%s': table, markdown or csv\n", format);
                return GM_EXIT_USAGE;
            }
        } else if (strcmp(a, "--out") == 0 && v) {
            out = argv[++i];
        } else if (a[0] != '-' && n_dirs < MAX_RUNS) {
            dirs[n_dirs++] = a;
        } else {
            fprintf(stderr, "gpumem compare: unexpected argument '%s' (see gpumem compare --help)\n", a);
            return GM_EXIT_USAGE;
        }
    }
    if (n_dirs < 2) {
        fprintf(stderr, "gpumem compare: needs two run folders or more (usage: gpumem compare BASE NEW [MORE...])\n");
        return GM_EXIT_USAGE;
    }
    gm_cmp_run runs[MAX_RUNS];
    gm_comparison c = {.runs = runs, .threshold = threshold, .alpha = alpha};
    char err[1200];
    int rc = GM_EXIT_OK;
    for (; c.n_runs < n_dirs; c.n_runs++) {
        struct stat st;
        if (stat(dirs[c.n_runs], &st) != 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, sizeof err, "%s: not a run folder", dirs[c.n_runs]);
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
            rc = GM_EXIT_USAGE;
        } else if (out && write_outputs(&c, out, err, sizeof err) != 0) {
            rc = GM_EXIT_USAGE;
        }
    }
    if (rc == GM_EXIT_OK && gate && c.n_regressions) {
        fprintf(stderr, "gpumem compare: %d regression%s against %s:\n", c.n_regressions,
                c.n_regressions == 1 ? "" : "s", runs[0].label);
        gm_compare_print_regressions(stderr, &c, "  ");
        rc = GM_EXIT_CHECK;
    } else if (rc == GM_EXIT_USAGE) {
        fprintf(stderr, "gpumem compare: %s\n", err);
    }
    gm_comparison_free(&c);
    for (int i = 0; i < c.n_runs; i++)
        gm_cmp_run_free(&runs[i]);
    return rc;
}
