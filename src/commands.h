/* Subcommands. Each returns the process exit status:
 * 0 success, 1 a check failed, 2 bad usage or input, 3 no usable device. */
#ifndef GM_COMMANDS_H
#define GM_COMMANDS_H

#include "options.h"

#include <stdbool.h>

enum { GM_EXIT_OK = 0, GM_EXIT_CHECK = 1, GM_EXIT_USAGE = 2, GM_EXIT_DEVICE = 3 };

int gm_cmd_info(int argc, char **argv);
int gm_cmd_bench(int argc, char **argv);
int gm_cmd_plan(int argc, char **argv);
int gm_cmd_stress(int argc, char **argv);
int gm_cmd_plot(int argc, char **argv);
int gm_cmd_fleet(int argc, char **argv);
/* Hidden: the probe worker the oom suite starts (bench/worker.c). */
int gm_cmd_worker(int argc, char **argv);

/* The bench command's options: the profile's [bench] section, its section
 * for `suite` (when not NULL), then the command line over them. Returns 0,
 * or 2 with a message printed; *help when --help was given. */
int gm_bench_options(int argc, char **argv, const char *suite, gm_bench_opts *o, bool *help);


#endif
