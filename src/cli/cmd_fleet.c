/*
 * gpumem fleet DIR: every run folder under DIR as one GPU of a fleet,
 * joined on their points, with the fleet median per metric and the GPUs
 * worse than it by more than --outlier-mad scales flagged (the rule is in
 * fleet.h). Prints the per-GPU summary, the card sheet of the GPUs
 * (report/card_sheet.h; up to FLEET_CARDS of them: the devices of a node)
 * and, with --points, the per-point table, as a table or Markdown; CSV is the
 * long per-point table. --out DIR also writes fleet.csv and fleet.md (the
 * card sheet and every table) there. Exit status: 0 no GPU flagged, 1
 * some GPU flagged, 2 bad usage or input (the message names the file and
 * line), 4 a file that cannot be written.
 */
#include "cli/commands.h"
#include "cli/option_table.h"
#include "analysis/fleet.h"
#include "analysis/fleet_output.h"
#include "report/card_sheet.h"
#include "run/results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The command as gpumem's list, --help and the man page show it (cli/command.h). */
const gm_command gm_command_fleet = {
    .name = "fleet",
    .run = gm_cmd_fleet,
    .options = GM_CMD_FLEET,
    .summary = "merge many run folders (one per GPU) and flag the outlier GPUs",
    .usage = "fleet DIR [OPTIONS]",
    .about = "Merges every run folder under DIR (results.csv + meta.json, found recursively), one GPU each, and flags "
        "the GPUs worse than the fleet median of their own device model; shows the card sheet of the GPUs, the "
        "per-point table with --points.",
    .exit_status = "0 no GPU flagged, 1 some GPU flagged, 2 bad usage or input, 4 the --out files could not be "
        "written",
    .positional = GM_POSITIONAL_DIR,
};

static void usage(FILE *f)
{
    gm_command_help(f, &gm_command_fleet);
}

#define FLEET_CARDS 16

typedef struct {
    const char *root, *out;
    double k;
    gm_fleet_format format;
    bool points;
} fleet_args;

static int parse_args(int argc, char **argv, fleet_args *a, bool *help)
{
    gm_report_args args = {.format = "table", .outlier_mad = 4};
    gm_opt_dest dest = {.report = &args};
    gm_cli_arg cli[64];
    int n = 0;
    char err[600];
    a->root = NULL;
    int rc = gm_option_split("fleet", GM_CMD_FLEET, "unknown option", argc, argv, cli, 64, &n, help);
    if (rc || *help)
        return rc;
    for (int i = 0; i < n; i++) {
        if (!cli[i].opt && a->root) {
            fprintf(stderr, "gpumem fleet: one folder only ('%s' and '%s')\n", a->root, cli[i].value);
            return GM_EXIT_USAGE;
        } else if (!cli[i].opt) {
            a->root = cli[i].value;
        } else if (gm_option_apply(cli[i].opt, &dest, cli[i].value, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem fleet: %s\n", err);
            return GM_EXIT_USAGE;
        }
    }
    if (!a->root) {
        fprintf(stderr, "gpumem fleet: which folder? (usage: gpumem fleet DIR [--outlier-mad K])\n");
        return GM_EXIT_USAGE;
    }
    a->out = args.out;
    a->points = args.points;
    a->k = args.outlier_mad;
    a->format = strcmp(args.format, "csv") == 0        ? GM_FLEET_CSV
                : strcmp(args.format, "markdown") == 0 ? GM_FLEET_MARKDOWN
                                                       : GM_FLEET_TABLE;
    return 0;
}

typedef struct {
    const gm_fleet *f;
    const char *root;
    double k;
    gm_fleet_format format;
    bool points;
} emit_ctx;

/* The card sheet of the fleet's GPUs, a column each ("gpu N", as the other
 * tables number them), where there are at most FLEET_CARDS. */
static void print_cards(FILE *out, bool md, void *ctx)
{
    const gm_fleet *f = ctx;
    gm_card cards[FLEET_CARDS];
    char labels[FLEET_CARDS][16], err[600];
    gm_grid g;
    if (f->n_gpus > FLEET_CARDS) {
        fprintf(out, "no card sheet: more than %d GPUs\n", FLEET_CARDS);
        return;
    }
    for (int i = 0; i < f->n_gpus; i++) {
        snprintf(labels[i], sizeof labels[i], "gpu %d", i + 1);
        cards[i] = (gm_card){f->gpus[i].dir, labels[i]};
    }
    if (gm_card_sheet(&g, cards, f->n_gpus, NULL, err, sizeof err) != 0) {
        fprintf(out, "no card sheet: %s\n", err);
        return;
    }
    gm_grid_print(out, &g, md);
    gm_grid_free(&g);
}

static void emit(FILE *out, void *ctx)
{
    const emit_ctx *c = ctx;
    gm_fleet_extras x = {c->points, print_cards, (void *)c->f};
    gm_fleet_print(c->f, c->root, c->k, c->format, &x, out);
}

static int write_outputs(const fleet_args *a, const gm_fleet *f)
{
    char path[4200], err[600];
    if (gm_make_dirs(a->out) != 0) {
        fprintf(stderr, "gpumem fleet: --out: cannot create %s\n", a->out);
        return -1;
    }
    emit_ctx csv = {f, a->root, a->k, GM_FLEET_CSV, true}, md = {f, a->root, a->k, GM_FLEET_MARKDOWN, true};
    snprintf(path, sizeof path, "%s/fleet.csv", a->out);
    int rc = gm_write_file_atomic(path, emit, &csv, err, sizeof err);
    snprintf(path, sizeof path, "%s/fleet.md", a->out);
    if (rc == 0)
        rc = gm_write_file_atomic(path, emit, &md, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "gpumem fleet: %s\n", err);
    return rc;
}

int gm_cmd_fleet(int argc, char **argv)
{
    fleet_args a;
    memset(&a, 0, sizeof a);   /* parse_args sets what it parses */
    bool help = false;
    int rc = parse_args(argc, argv, &a, &help);
    if (rc || help) {
        if (help)
            usage(stdout);
        return rc;
    }
    gm_fleet f;
    char err[4600];
    gm_fleet_init(&f);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (gm_fleet_load(&f, a.root, err, sizeof err) != 0) {
        fprintf(stderr, "gpumem fleet: %s\n", err);
        gm_fleet_release(&f);
        return GM_EXIT_USAGE;
    }
    int flagged = gm_fleet_judge(&f, a.k);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (flagged < 0) {
        fprintf(stderr, "gpumem fleet: out of memory\n");
        gm_fleet_release(&f);
        return GM_EXIT_USAGE;
    }
    emit_ctx stdout_ctx = {&f, a.root, a.k, a.format, a.points};
    emit(stdout, &stdout_ctx);
    fprintf(stderr, "gpumem fleet: %d run folder%s, %ld rows, %d points read and judged in %.3f s; %d GPU%s flagged\n",
            f.n_gpus, f.n_gpus == 1 ? "" : "s", f.rows_read, f.n_points,
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), flagged,
            flagged == 1 ? "" : "s");
    rc = flagged ? GM_EXIT_CHECK : GM_EXIT_OK;
    if (a.out && write_outputs(&a, &f) != 0)
        rc = GM_EXIT_OUTPUT;
    gm_fleet_release(&f);
    return rc;
}
