/*
 * The list of gpumem's commands (each declared in its own file,
 * cli/command.h), and the two commands that read the list: help and
 * version. Only main and this list's own file use it, so that no command
 * calls into a file that names it (scripts/check-cycles.pl).
 */
#ifndef GM_COMMAND_LIST_H
#define GM_COMMAND_LIST_H

#include "cli/command.h"

#include <stdio.h>

/* Every command, in the order usage lists them; NULL ends it. */
extern const gm_command *const gm_commands[];

/* The command called name; NULL if none is. */
const gm_command *gm_command_find(const char *name);

/* Prints gpumem's own usage: the commands that are not hidden with their
 * summary lines, and the exit statuses. */
void gm_command_list(FILE *f);

#endif
