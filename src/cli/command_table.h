/*
 * The command table: every command of gpumem declared once (its name,
 * the function that runs it, its option set in the option table, one
 * summary line, its usage lines, what it does, its exit statuses and what
 * its positional arguments are). gpumem's own usage, each command's
 * --help, the man page and the shell completion (gpumem help --man,
 * --completion: help_man.c, help_completion.c) are all drawn from it and
 * from the option table, so none of them can disagree with the parser.
 */
#ifndef GM_COMMAND_TABLE_H
#define GM_COMMAND_TABLE_H

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
} gm_command;

/* Every command, in the order usage lists them; a NULL name ends it. */
extern const gm_command gm_commands[];

/* The command called name; NULL if none is. */
const gm_command *gm_command_find(const char *name);

/* Prints the command's --help: its usage lines, what it does, every
 * option of its set (gm_option_help) and its exit statuses. */
void gm_command_help(FILE *f, const gm_command *c);

/* Prints gpumem's own usage: the commands that are not hidden with their
 * summary lines. */
void gm_command_list(FILE *f);

#endif
