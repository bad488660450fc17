/*
 * The list of commands (command_list.h), and the commands that read it:
 * `gpumem help [COMMAND]`, with `gpumem help --man` (the man page) and
 * `gpumem help --completion bash` (the bash completion) that make builds
 * and make install installs, and `gpumem version`.
 */
#include "cli/command_list.h"

#include "cli/commands.h"
#include "cli/help_pages.h"
#include "cli/option_table.h"
#include "run/meta.h"

#include <string.h>

static int run_version(int argc, char **argv)
{
    if (argc > 1) {
        fprintf(stderr, "gpumem version: unexpected argument '%s' (version takes none)\n", argv[1]);
        return GM_EXIT_USAGE;
    }
    printf("gpumem %s\n", gm_suite_version());
    return GM_EXIT_OK;
}

static const gm_command version_command = {
    .name = "version",
    .run = run_version,
    .summary = "print the suite version",
    .usage = "version",
    .exit_status = "0",
};

/* Writes a page and flushes stdout: 0, or 4 with a message. */
static int page(int (*write)(FILE *, const gm_command *const *), const char *what)
{
    if (write(stdout, gm_commands) != 0 || fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gpumem help: cannot write the %s to stdout\n", what);
        return GM_EXIT_OUTPUT;
    }
    return GM_EXIT_OK;
}

static int run_help(int argc, char **argv)
{
    if (argc > 3 || (argc == 3 && strcmp(argv[1], "--completion") != 0)) {
        fprintf(stderr, "gpumem help: unexpected argument '%s' (usage: gpumem help [COMMAND | --man | --completion "
                        "bash])\n", argv[argc - 1]);
        return GM_EXIT_USAGE;
    }
    if (argc == 1) {
        gm_command_list(stdout);
        return GM_EXIT_OK;
    }
    if (strcmp(argv[1], "--man") == 0)
        return page(gm_help_man, "man page");
    if (strcmp(argv[1], "--completion") == 0) {
        if (argc < 3 || strcmp(argv[2], "bash") != 0) {
            fprintf(stderr, "gpumem help: --completion '%s': unknown shell (allowed: bash)\n", argc < 3 ? "" : argv[2]);
            return GM_EXIT_USAGE;
        }
        return page(gm_help_completion_bash, "completion");
    }
    const gm_command *c = gm_command_find(argv[1]);
    if (!c || c->hidden) {
        fprintf(stderr, "gpumem help: no command '%s' (gpumem help lists them)\n", argv[1]);
        return GM_EXIT_USAGE;
    }
    gm_command_help(stdout, c);
    return GM_EXIT_OK;
}

static const gm_command help_command = {
    .name = "help",
    .run = run_help,
    .summary = "this list, or a command's options (help COMMAND)",
    .usage = "help [COMMAND]",
    .about = "Prints this list of commands, or with COMMAND that command's --help.",
    .exit_status = "0 success, 2 no such command",
    .positional = GM_POSITIONAL_COMMAND,
};

const gm_command *const gm_commands[] = {
    &gm_command_info, &gm_command_bench, &gm_command_plan, &gm_command_plot, &gm_command_compare,
    &gm_command_fleet, &gm_command_stress, &version_command, &help_command, &gm_command_worker, NULL,
};

const gm_command *gm_command_find(const char *name)
{
    for (int i = 0; gm_commands[i]; i++)
        if (strcmp(gm_commands[i]->name, name) == 0)
            return gm_commands[i];
    return NULL;
}

void gm_command_list(FILE *f)
{
    fprintf(f, "usage: gpumem COMMAND [OPTIONS]\n\ncommands:\n");
    for (int i = 0; gm_commands[i]; i++)
        if (!gm_commands[i]->hidden)
            fprintf(f, "  %-11s %s\n", gm_commands[i]->name, gm_commands[i]->summary);
    fprintf(f, "\n`gpumem COMMAND --help` describes a command's options; `man gpumem` all of them.\n");
    gm_help_wrap(f, "exit status: " GM_EXIT_STATUS_COMMON, 0, 0);
}
