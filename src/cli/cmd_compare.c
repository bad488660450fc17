/*
 * `gpumem compare BASE NEW [MORE...]`: compares run folders point by point
 * (analysis/compare.h) and prints a terminal table, Markdown or CSV. Runs
 * of different devices (or --cards) lead with the card sheet instead
 * (report/card_sheet.h), the point-by-point table following with --points.
 * With --out DIR it also writes the files of report/compare_files.h. With
 * --gate the exit status is 1 when any run regressed against BASE, the
 * regressions listed on stderr; tests of one run a side without rounds are
 * not gated, and when no point can be gated the status is 2, with the
 * advice how to bench for a gate. Bad usage or input (a missing folder, a
 * malformed CSV, named by file and line) exits 2; files that cannot be
 * written, 4. A run named reference:NAME is the reference run NAME kept
 * with gpumem (results/reference/NAME in the source tree,
 * DATADIR/reference/NAME installed).
 */
#include "cli/commands.h"
#include "cli/option_rules.h"
#include "cli/option_table.h"
#include "analysis/compare.h"
#include "analysis/compare_output.h"
#include "lib/datafile.h"
#include "report/compare_files.h"

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
        "repetitions, which cannot separate run-to-run noise: --gate does not gate it. Runs of different "
        "devices (or --cards) lead with the card sheet, a column a run, the point-by-point table following with "
        "--points. A run named reference:NAME is the reference run NAME of a real card kept with gpumem (gpumem "
        "info says where).",
    .exit_status = "0 success, 1 a regression under --gate, 2 bad usage or input (a missing folder, a cut or "
        "malformed CSV) or --gate with no point it can gate, 4 the comparison could not be written (its "
        "--out folder, or stdout)",
    .positional = GM_POSITIONAL_RUN,
};

#define MAX_RUNS 16

static void usage(FILE *f)
{
    gm_command_help(f, &gm_command_compare);
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
                snprintf(err, err_len, "%.300s: no such reference run (%s%.800s)", part, k ? "there are: " : "none found",
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

/* stdout: for cards, a line on the runs, the card sheet and (points) the
 * point-by-point report; else that report alone; CSV always the tidy
 * rows. Returns 0, or -1 with err. */
static int print(const gm_comparison *c, const char *format, bool points, char *err, size_t len)
{
    int markdown = strcmp(format, "markdown") == 0, bad = 0;
    if (strcmp(format, "csv") == 0) {
        bad = gm_compare_print_csv(stdout, c);
    } else if (c->cards) {
        int compared = 0;
        for (int i = 0; i < c->n_results; i++)
            compared += c->results[i].run == 1;
        printf(markdown ? "# gpumem compare\n\n%d runs, a column each, against BASE %s\n\n"
                        : "gpumem compare: %d runs, a column each, against BASE %s\n",
               c->n_runs, c->runs[0].label);
        if (gm_compare_print_cards(stdout, c, markdown, err, len) != 0)
            return -1;
        if (points) {
            printf("\n");
            bad = gm_compare_print_report(stdout, c, markdown);
        } else {
            printf("%spoint by point: %d points compared with %s, %d left out: --points, or compare.md of --out DIR\n",
                   markdown ? "\n" : "", compared, c->n_runs > 1 ? c->runs[1].label : "-", c->n_left_out);
        }
    } else {
        bad = gm_compare_print_report(stdout, c, markdown);
    }
    if (fflush(stdout) != 0 || bad || ferror(stdout)) {
        snprintf(err, len, "cannot write the comparison to stdout");
        return -1;
    }
    return 0;
}

/* The gate's verdict on stderr: the regressions (exit 1); none gated, with
 * the advice how to bench for a gate (exit 2); else 0. Either way the
 * points whose test could not see a change of the threshold. */
static int judge_gate(const gm_comparison *c)
{
    gm_compare_print_blind(stderr, c, "gpumem compare: --gate: ");
    if (c->n_regressions) {
        fprintf(stderr, "gpumem compare: %d regression%s against %s:\n", c->n_regressions,
                c->n_regressions == 1 ? "" : "s", c->runs[0].label);
        gm_compare_print_regressions(stderr, c, "  ");
        return GM_EXIT_CHECK;
    }
    if (c->n_gated)
        return GM_EXIT_OK;
    if (c->n_not_gated)
        fprintf(stderr, "gpumem compare: --gate: no point can be gated: %d test%s compare%s one run a side "
                        "without rounds, whose repetitions cannot separate run-to-run noise from a change; bench "
                        "both sides in rounds (gpumem bench ... --reps 20 --rounds 5), or compare several baseline "
                        "runs (BASE1,BASE2,BASE3 NEW)\n", c->n_not_gated, c->n_not_gated == 1 ? "" : "s",
                c->n_not_gated == 1 ? "s" : "");
    else
        fprintf(stderr, "gpumem compare: --gate: no point can be gated: the runs share no point of a metric the "
                        "gate judges\n");
    return GM_EXIT_USAGE;
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
    bool gate = args.gate;
    double threshold = args.threshold, alpha = args.alpha;
    if (n_dirs < 2) {
        fprintf(stderr, "gpumem compare: needs two run folders or more (usage: gpumem compare BASE NEW [MORE...])\n");
        return GM_EXIT_USAGE;
    }
    gm_cmp_run runs[MAX_RUNS];
    gm_comparison c = {.runs = runs, .threshold = threshold, .alpha = alpha, .gate = gate, .cards = args.cards};
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
    for (int k = 1; rc == GM_EXIT_OK && k < c.n_runs; k++)
        c.cards = c.cards || (strcmp(runs[k].device, runs[0].device) != 0 && strcmp(runs[k].device, "?") != 0
                              && strcmp(runs[0].device, "?") != 0);
    /* An option that concerns nothing these runs make (option_rules.h). */
    gm_ask ask = {.cards = c.cards};
    for (int i = 0; i < n_cli && rc == GM_EXIT_OK; i++)
        if (cli[i].opt && gm_option_rule_check(cli[i].opt, cli[i].value, GM_CMD_COMPARE, &ask, 1, err, sizeof err))
            rc = GM_EXIT_USAGE;
    if (rc == GM_EXIT_OK && gm_compare(&c) != 0) {
        snprintf(err, sizeof err, "out of memory");
        rc = GM_EXIT_USAGE;
    }
    if (rc == GM_EXIT_OK && print(&c, format, args.points, err, sizeof err) != 0)
        rc = GM_EXIT_OUTPUT;
    if (rc == GM_EXIT_OK && out && gm_compare_write(&c, out, err, sizeof err) != 0)
        rc = GM_EXIT_OUTPUT;
    if (rc != GM_EXIT_OK)
        fprintf(stderr, "gpumem compare: %s\n", err);
    else if (gate)
        rc = judge_gate(&c);
    gm_comparison_free(&c);
    for (int i = 0; i < c.n_runs; i++)
        gm_cmp_run_free(&runs[i]);
    return rc;
}
