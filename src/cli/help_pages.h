/*
 * What `gpumem help` writes from the command and option tables
 * (command_table.h, option_table.h), so that neither can disagree with
 * the parser: the man page gpumem.1 (help_man.c) and the bash completion
 * (help_completion.c). make builds both from the binary and make install
 * installs them.
 */
#ifndef GM_HELP_PAGES_H
#define GM_HELP_PAGES_H

#include <stdio.h>

/* Writes the man page, roff for man(1): every command that is not hidden
 * with its usage, what it does, each option with exactly the text its
 * --help gives, and its exit statuses. Returns 0, or -1 when f failed. */
int gm_help_man(FILE *f);

/* Writes a bash completion script defining _gpumem and registering it for
 * gpumem: commands, each command's options, the allowed values of
 * enumerations and lists (a list's last item after its comma), model
 * presets and profiles (lib/datafile.h: the names found when it is
 * written), folders and files where an option or argument takes a path,
 * and reference:NAME for compare's runs. Returns 0, or -1 when f failed. */
int gm_help_completion_bash(FILE *f);

#endif
