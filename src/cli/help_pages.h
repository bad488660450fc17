/*
 * What `gpumem help` writes from the commands (command.h) and the option
 * table (option_table.h), so that neither can disagree with the parser:
 * the man page gpumem.1 (help_man.c) and the bash completion
 * (help_completion.c). make builds both from the binary and make install
 * installs them. Both take the list of commands (command_list.h), NULL
 * ended.
 */
#ifndef GM_HELP_PAGES_H
#define GM_HELP_PAGES_H

#include "cli/command.h"

#include <stdio.h>

/* Writes the man page, roff for man(1): every command that is not hidden
 * with its usage, what it does, each option with exactly the text its
 * --help gives, and its exit statuses. Returns 0, or -1 when f failed. */
int gm_help_man(FILE *f, const gm_command *const *commands);

/* Writes a bash completion script defining _gpumem and registering it for
 * gpumem: commands, each command's options, the allowed values of
 * enumerations and lists (a list's last item after its comma), model
 * presets and profiles (lib/datafile.h: the names found when it is
 * written), folders and files where an option or argument takes a path,
 * and reference:NAME for compare's runs. Returns 0, or -1 when f failed. */
int gm_help_completion_bash(FILE *f, const gm_command *const *commands);

#endif
