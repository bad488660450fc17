/* A command's --help (cli/command.h). */
#include "cli/command.h"

#include "cli/option_table.h"

#include <stdlib.h>
#include <string.h>

void gm_command_help(FILE *f, const gm_command *c)
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
        gm_profile_text *t = c->profile ? malloc(sizeof *t) : NULL;
        gm_option_help_profile(f, c->options, t && gm_profile_text_read(c->profile, t) == 0 ? t : NULL);
        free(t);
    }
    fputc('\n', f);
    char status[600];
    snprintf(status, sizeof status, "exit status: %s", c->exit_status);
    gm_help_wrap(f, status, 0, 0);
}
