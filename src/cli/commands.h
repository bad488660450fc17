/* Subcommands. Each returns the process exit status: 0 success, 1 a check
 * failed, 2 bad usage or input, 3 no usable device (or it was lost), 4 the
 * results could not be written, 128 + N stopped by signal N (130 SIGINT,
 * 143 SIGTERM). */
#ifndef GM_COMMANDS_H
#define GM_COMMANDS_H

#include "bench/options.h"
#include "cli/command.h"
#include "lib/exit_codes.h"

#include <stdbool.h>


int gm_cmd_info(int argc, char **argv);
int gm_cmd_bench(int argc, char **argv);
int gm_cmd_plan(int argc, char **argv);
int gm_cmd_stress(int argc, char **argv);
int gm_cmd_plot(int argc, char **argv);
int gm_cmd_compare(int argc, char **argv);
int gm_cmd_fleet(int argc, char **argv);
/* Hidden: the probe worker the oom suite starts (bench/oom/worker.c). */
int gm_cmd_worker(int argc, char **argv);

/* Each command as its own file declares it (cli/command.h); the list of
 * them is cli/command_list.h. */
extern const gm_command gm_command_info, gm_command_bench, gm_command_plan, gm_command_plot, gm_command_compare,
    gm_command_fleet, gm_command_stress, gm_command_worker;

/* The bench command's options: the profile's [bench] section, its section
 * for `suite` (when not NULL), then the command line over them. Returns 0,
 * or 2 with a message printed; *help when --help was given. */
int gm_bench_options(int argc, char **argv, const char *suite, gm_bench_opts *o, bool *help);

/* A bench run to continue (gpumem bench --resume): its folder and journal. */
typedef struct gm_journal_state gm_journal_state;
typedef struct {
    const char *dir;
    int journal_fd;
    const gm_journal_state *journal;
} gm_resume;

/* gpumem bench with argv (argv[0] "bench"); `resume` continues that run
 * instead of starting one (NULL: a new run; its journal_fd stays the
 * caller's to close). */
int gm_bench_run(int argc, char **argv, const gm_resume *resume);

/* gpumem bench --resume RUN [--quiet]: argv as gm_cmd_bench got it; the
 * run's saved arguments and journal go to `run` (gm_bench_run), whose exit
 * status it returns (2 when the run cannot be resumed). */
typedef int (*gm_bench_runner)(int argc, char **argv, const gm_resume *resume);
int gm_bench_resume(int argc, char **argv, gm_bench_runner run);

#endif
