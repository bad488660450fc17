/* The command table (command_table.h). */
#include "cli/command_table.h"

#include "cli/commands.h"
#include "cli/option_table.h"

#include <string.h>

#define COMMON_EXIT "0 success, 1 a check failed, 2 bad usage or input, 3 no usable device (or it failed or hung), " \
                    "4 results could not be written, 130/143 stopped by SIGINT/SIGTERM"

const gm_command gm_commands[] = {
    {"info", gm_cmd_info, 0, "list every backend and device with its facts", "info",
     "Lists every backend and device with its facts, and the data folders gpumem reads its profiles, model "
     "presets, plot scripts and reference runs from.",
     "0 a usable device was found, 2 bad usage, 3 none", GM_POSITIONAL_NONE, false},
    {"bench", gm_cmd_bench, GM_CMD_BENCH, "run benchmark suites and write a results folder",
     "bench [OPTIONS]\nbench --resume RUN [--quiet]",
     "Runs benchmark suites on a device and writes a run folder (results.csv, samples.csv, meta.json). Options "
     "name the suites or workloads they concern first. A profile sets them by their long names; command-line "
     "options override the profile's.",
     COMMON_EXIT, GM_POSITIONAL_NONE, false},
    {"plan", gm_cmd_plan, GM_CMD_PLAN, "print a workload's memory model (its tensors and total bytes)",
     "plan --workload W [--model NAME] [SHAPE OPTIONS] [--precision LIST]\n"
     "plan --model PRESET|CONFIG.json [--mode inference|train] [MODEL OPTIONS]",
     "Prints the tensors workload W holds at once (name, role, bytes), one a line, and a last line `total "
     "<bytes>`, for each precision. Without --workload: the memory of a whole model per GPU, grouped by role "
     "with subtotals and the total, for each precision (the options marked `model`).",
     "0 success, 2 bad usage or input, 3 no usable device (--fit device)", GM_POSITIONAL_NONE, false},
    {"plot", gm_cmd_plot, GM_CMD_PLOT, "render a run folder's results as PNG and SVG plots (gnuplot)",
     "plot RUN [--out DIR]",
     "Renders RUN/results.csv as PNG and SVG plots into RUN/plots (or DIR), gnuplot's data and logs in its "
     "subfolder data/, and writes RUN/report.md and RUN/report.html.",
     "0 success, 2 bad usage or input, or gnuplot failed", GM_POSITIONAL_DIR, false},
    {"compare", gm_cmd_compare, GM_CMD_COMPARE, "compare run folders point by point; --gate fails on a regression",
     "compare BASE NEW [MORE...] [OPTIONS]",
     "Compares run folders point by point, each against BASE: medians, their ratio with a 95% interval, "
     "Welch's t test on the round medians of runs benched in rounds (Holm-corrected over the run's tests) and "
     "the smallest change it could detect. A run may be a group of runs, BASE1,BASE2,BASE3: their run medians "
     "are then the test's units. One run a side without rounds falls back to a Mann-Whitney U test on the "
     "repetitions, which cannot separate run-to-run noise. A run named reference:NAME is the reference run "
     "NAME of a real card kept with gpumem (gpumem info says where).",
     "0 success, 1 a regression under --gate, 2 bad usage or input (a missing folder, a cut or malformed CSV)",
     GM_POSITIONAL_RUN, false},
    {"fleet", gm_cmd_fleet, GM_CMD_FLEET, "merge many run folders (one per GPU) and flag the outlier GPUs",
     "fleet DIR [OPTIONS]",
     "Merges every run folder under DIR (results.csv + meta.json, found recursively), one GPU each, and flags "
     "the GPUs worse than the fleet median.",
     "0 no GPU flagged, 1 some GPU flagged, 2 bad usage or input", GM_POSITIONAL_DIR, false},
    {"stress", gm_cmd_stress, GM_CMD_STRESS, "check that a device keeps its data under memory pressure (TAP)",
     "stress [OPTIONS]",
     "Checks that a device keeps its data and stays usable under memory pressure; prints TAP (one test point "
     "per check, YAML diagnostics).",
     "0 every check passed, 1 a check failed, 2 bad usage, 3 no device, or the device was lost or hung, 4 "
     "results could not be written, 130/143 SIGINT/SIGTERM",
     GM_POSITIONAL_NONE, false},
    {"version", gm_cmd_version, 0, "print the suite version", "version", NULL, "0", GM_POSITIONAL_NONE, false},
    {"help", gm_cmd_help, 0, "this list, or a command's options (help COMMAND)", "help [COMMAND]",
     "Prints this list of commands, or with COMMAND that command's --help.", "0 success, 2 no such command",
     GM_POSITIONAL_COMMAND, false},
    {"__worker", gm_cmd_worker, 0, "the oom suite's probe worker", "__worker", NULL, COMMON_EXIT,
     GM_POSITIONAL_NONE, true},
    {NULL, NULL, 0, NULL, NULL, NULL, NULL, GM_POSITIONAL_NONE, false},
};

const gm_command *gm_command_find(const char *name)
{
    for (const gm_command *c = gm_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

void gm_command_help(FILE *f, const gm_command *c)
{
    const char *line = c->usage;
    for (int first = 1; *line; first = 0) {
        size_t n = strcspn(line, "\n");
        fprintf(f, "%s gpumem %.*s\n", first ? "usage:" : "      ", (int)n, line);
        line += n + (line[n] == '\n');
    }
    fputc('\n', f);
    gm_help_wrap(f, c->about ? c->about : c->summary, 0, 0);
    if (c->options) {
        fputc('\n', f);
        gm_option_help(f, c->options);
    }
    fputc('\n', f);
    char status[600];
    snprintf(status, sizeof status, "exit status: %s", c->exit_status);
    gm_help_wrap(f, status, 0, 0);
}

void gm_command_list(FILE *f)
{
    fprintf(f, "usage: gpumem COMMAND [OPTIONS]\n\ncommands:\n");
    for (const gm_command *c = gm_commands; c->name; c++)
        if (!c->hidden)
            fprintf(f, "  %-11s %s\n", c->name, c->summary);
    fprintf(f, "\n`gpumem COMMAND --help` describes a command's options; `man gpumem` all of them.\n");
    gm_help_wrap(f, "exit status: " COMMON_EXIT, 0, 0);
}
