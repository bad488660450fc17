/*
 * A command of gpumem, declared once beside the function that runs it
 * (cmd_*.c): its name, its option set in the option table, one summary
 * line, its usage lines, what it does, its exit statuses and what its
 * positional arguments are. gpumem's usage, the command's --help, the man
 * page and the shell completion (help_pages.h) are all drawn from these
 * and from the option table, so none of them can disagree with the
 * parser. The list of every command is command_list.h.
 */
#ifndef GM_COMMAND_H
#define GM_COMMAND_H

#include <stdbool.h>
#include <stdio.h>

/* What a command's positional arguments are (shell completion offers them). */
typedef enum {
    GM_POSITIONAL_NONE,           /* it takes none */
    GM_POSITIONAL_DIR,            /* folders */
    GM_POSITIONAL_RUN,            /* run folders, or reference:NAME (a reference run) */
    GM_POSITIONAL_COMMAND,        /* a command's name */
} gm_positional;

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);   /* argv[0] is the command's name */
    unsigned options;             /* its GM_CMD_* bit in the option table; 0: no options */
    const char *summary;          /* one line, for gpumem's usage and the man page */
    const char *usage;            /* its usage lines, "\n" between, each after "gpumem " */
    const char *about;            /* what it does: one paragraph, unwrapped; NULL: the summary */
    const char *exit_status;      /* its exit statuses, unwrapped */
    gm_positional positional;
    bool hidden;                  /* not listed anywhere (the oom suite's probe worker) */
    /* The profile whose settings its options' help (and man page) show
     * beside each default (bench: quick); NULL: none. */
    const char *profile;
} gm_command;

/* The exit statuses every command that runs on a device may give. */
#define GM_EXIT_STATUS_COMMON "0 success, 1 a check failed, 2 bad usage or input, 3 no usable device (or it " \
                              "failed or hung), 4 results could not be written, 130/143 stopped by SIGINT/SIGTERM"

/* Prints the command's --help: its usage lines, what it does, every
 * option of its set (gm_option_help) and its exit statuses. */
void gm_command_help(FILE *f, const gm_command *c);


#endif
