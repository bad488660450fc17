/*
 * gpumem fleet DIR: every run folder under DIR as one GPU of a fleet,
 * joined on their points, with the fleet median per metric and the GPUs
 * worse than it by more than --outlier-mad scales flagged (the rule is in
 * fleet.h). Prints a table, Markdown or CSV; --out DIR also writes
 * fleet.csv and fleet.md there. Exit status: 0 no GPU flagged, 1 some GPU
 * flagged, 2 bad usage or input (the message names the file and line).
 */
#include "cli/commands.h"
#include "analysis/fleet.h"
#include "analysis/fleet_output.h"
#include "run/results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpumem fleet DIR [OPTIONS]\n"
            "\n"
            "Merges every run folder under DIR (results.csv + meta.json, found recursively),\n"
            "one GPU each, and flags the GPUs worse than the fleet median.\n"
            "\n"
            "  --outlier-mad K     flag a GPU more than K scales from the median in the\n"
            "                      metric's worse direction (default 4; scale: the larger of\n"
            "                      1.4826 x MAD across GPUs, the repetitions' typical stdev,\n"
            "                      and 1%% of the median)\n"
            "  --format F          table | markdown | csv (default table)\n"
            "  --out DIR           also write DIR/fleet.csv and DIR/fleet.md\n"
            "\n"
            "exit status: 0 no GPU flagged, 1 some GPU flagged, 2 bad usage or input\n");
}

typedef struct {
    const char *root, *out;
    double k;
    gm_fleet_format format;
} fleet_args;

static int parse_args(int argc, char **argv, fleet_args *a, bool *help)
{
    a->root = a->out = NULL;
    a->k = 4;
    a->format = GM_FLEET_TABLE;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help = true;
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0) {
            if (a->root) {
                fprintf(stderr, "gpumem fleet: one folder only ('%s' and '%s')\n", a->root, arg);
                return GM_EXIT_USAGE;
            }
            a->root = arg;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "gpumem fleet: option '%s' needs a value (see gpumem fleet --help)\n", arg);
            return GM_EXIT_USAGE;
        }
        const char *v = argv[++i];
        if (strcmp(arg, "--outlier-mad") == 0) {
            char *end;
            a->k = strtod(v, &end);
            if (*end || !(a->k > 0 && a->k < 1e6)) {
                fprintf(stderr, "gpumem fleet: --outlier-mad '%s': expected a number above 0 (e.g. 4)\n", v);
                return GM_EXIT_USAGE;
            }
        } else if (strcmp(arg, "--format") == 0) {
            if (strcmp(v, "table") == 0)
                a->format = GM_FLEET_TABLE;
            else if (strcmp(v, "markdown") == 0)
                a->format = GM_FLEET_MARKDOWN;
            else if (strcmp(v, "csv") == 0)
                a->format = GM_FLEET_CSV;
            else {
                fprintf(stderr, "gpumem fleet: --format '%s': expected table, markdown or csv\n", v);
                return GM_EXIT_USAGE;
            }
        } else if (strcmp(arg, "--out") == 0) {
            a->out = v;
        } else {
            fprintf(stderr, "gpumem fleet: unknown option '%s' (see gpumem fleet --help)\n", arg);
            return GM_EXIT_USAGE;
        }
    }
    if (!*help && !a->root) {
        fprintf(stderr, "gpumem fleet: which folder? (usage: gpumem fleet DIR [--outlier-mad K])\n");
        return GM_EXIT_USAGE;
    }
    return 0;
}

typedef struct {
    const gm_fleet *f;
    const char *root;
    double k;
    gm_fleet_format format;
} emit_ctx;

static void emit(FILE *out, void *ctx)
{
    const emit_ctx *c = ctx;
    gm_fleet_print(c->f, c->root, c->k, c->format, out);
}

static int write_outputs(const fleet_args *a, const gm_fleet *f)
{
    char path[4200], err[600];
    if (gm_make_dirs(a->out) != 0) {
        fprintf(stderr, "gpumem fleet: --out: cannot create %s\n", a->out);
        return -1;
    }
    emit_ctx csv = {f, a->root, a->k, GM_FLEET_CSV}, md = {f, a->root, a->k, GM_FLEET_MARKDOWN};
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
    gm_fleet_print(&f, a.root, a.k, a.format, stdout);
    fprintf(stderr, "gpumem fleet: %d run folder%s, %ld rows, %d points read and judged in %.3f s; %d GPU%s flagged\n",
            f.n_gpus, f.n_gpus == 1 ? "" : "s", f.rows_read, f.n_points,
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), flagged,
            flagged == 1 ? "" : "s");
    rc = flagged ? GM_EXIT_CHECK : GM_EXIT_OK;
    if (a.out && write_outputs(&a, &f) != 0)
        rc = GM_EXIT_USAGE;
    gm_fleet_release(&f);
    return rc;
}
