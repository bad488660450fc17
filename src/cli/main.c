/* gpumem: entry point and subcommand dispatch (the list of commands,
 * command_list.h). */
#include "cli/command_list.h"
#include "lib/exit_codes.h"

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
    for (int i = 0; gm_commands[i]; i++)
        if (!gm_commands[i]->hidden)
            fprintf(stderr, "%s %s", i ? "," : "", gm_commands[i]->name);
    fprintf(stderr, ")\n");
    return GM_EXIT_USAGE;
}
