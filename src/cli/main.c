/* gpumem: entry point and subcommand dispatch. */
#include "cli/commands.h"
#include "run/meta.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpumem COMMAND [OPTIONS]\n"
            "\n"
            "commands:\n"
            "  info        list every backend and device with its facts\n"
            "  bench       run benchmark suites and write a results folder\n"
            "  plan        print a workload's memory model (its tensors and total bytes)\n"
            "  plot        render a run folder's results as PNG and SVG plots (gnuplot)\n"
            "  compare     compare run folders point by point; --gate fails on a regression\n"
            "  fleet       merge many run folders (one per GPU) and flag the outlier GPUs\n"
            "  stress      check that a device keeps its data under memory pressure (TAP)\n"
            "  version     print the suite version\n"
            "\n"
            "`gpumem COMMAND --help` describes a command's options.\n"
            "exit status: 0 success, 1 a check failed, 2 bad usage or input, 3 no usable device,\n"
            "4 results could not be written, 130/143 stopped by SIGINT/SIGTERM\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return GM_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "info") == 0)
        return gm_cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return gm_cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "plan") == 0)
        return gm_cmd_plan(argc - 1, argv + 1);
    if (strcmp(cmd, "plot") == 0)
        return gm_cmd_plot(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return gm_cmd_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "fleet") == 0)
        return gm_cmd_fleet(argc - 1, argv + 1);
    if (strcmp(cmd, "stress") == 0)
        return gm_cmd_stress(argc - 1, argv + 1);
    if (strcmp(cmd, "__worker") == 0)
        return gm_cmd_worker(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("gpumem %s\n", gm_suite_version());
        return GM_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return GM_EXIT_OK;
    }
    fprintf(stderr, "gpumem: unknown command '%s' (commands: info, bench, plan, plot, compare, fleet, stress, version)\n", cmd);
    return GM_EXIT_USAGE;
}
