/*
 * `gpumem help [COMMAND]`, `gpumem version`, and the pages made from the
 * tables: `gpumem help --man` (the man page) and `gpumem help --completion
 * bash` (the bash completion), which make builds and make install installs.
 */
#include "cli/command_table.h"
#include "cli/commands.h"
#include "cli/help_pages.h"
#include "run/meta.h"

#include <stdio.h>
#include <string.h>

int gm_cmd_version(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "gpumem version: unexpected argument '%s' (version takes none)\n", argv[1]);
        return GM_EXIT_USAGE;
    }
    printf("gpumem %s\n", gm_suite_version());
    return GM_EXIT_OK;
}

/* Writes a page and flushes stdout: 0, or 4 with a message. */
static int page(int (*write)(FILE *), const char *what)
{
    if (write(stdout) != 0 || fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gpumem help: cannot write the %s to stdout\n", what);
        return GM_EXIT_OUTPUT;
    }
    return GM_EXIT_OK;
}

int gm_cmd_help(int argc, char **argv)
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
