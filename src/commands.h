/* Subcommands. Each returns the process exit status:
 * 0 success, 1 a check failed, 2 bad usage or input, 3 no usable device. */
#ifndef GM_COMMANDS_H
#define GM_COMMANDS_H

enum { GM_EXIT_OK = 0, GM_EXIT_CHECK = 1, GM_EXIT_USAGE = 2, GM_EXIT_DEVICE = 3 };

int gm_cmd_info(int argc, char **argv);
int gm_cmd_bench(int argc, char **argv);
int gm_cmd_plan(int argc, char **argv);

#endif
