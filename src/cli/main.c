/* gpumem: entry point and subcommand dispatch (the command table,
 * command_table.h). */
#include "cli/command_table.h"
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        gm_command_list(stderr);
        return GM_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0)
        name = "version";
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        name = "help";
    const gm_command *c = gm_command_find(name);
    if (c)
        return c->run(argc - 1, argv + 1);
    fprintf(stderr, "gpumem: unknown command '%s' (commands:", name);
    for (c = gm_commands; c->name; c++)
        if (!c->hidden)
            fprintf(stderr, "%s %s", c == gm_commands ? "" : ",", c->name);
    fprintf(stderr, ")\n");
    return GM_EXIT_USAGE;
}
