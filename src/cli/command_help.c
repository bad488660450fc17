/* A command's --help (cli/command.h). */
#include "cli/command.h"

#include "cli/option_table.h"

#include <string.h>

void gm_command_help(FILE *f, const gm_command *c)
{
    gm_command_help_with(f, c, NULL, NULL);
}

void gm_command_help_with(FILE *f, const gm_command *c, void (*options)(FILE *f, void *ctx), void *ctx)
{
    const char *line = c->usage;
    for (int first = 1; *line; first = 0) {
        size_t n = strcspn(line, "\n");
        fprintf(f, "%s gpumem %.*s\n", first ? "usage:" : "      ", (int)n, line);
        line += n + (line[n] == '\n');
    }
    fputc('\n', f);
    gm_help_wrap(f, c->about ? c->about : c->summary, 0, 0);
    if (c->options) {
        fputc('\n', f);
        if (options)
            options(f, ctx);
        else
            gm_option_help(f, c->options);
    }
    fputc('\n', f);
    char status[600];
    snprintf(status, sizeof status, "exit status: %s", c->exit_status);
    gm_help_wrap(f, status, 0, 0);
}
