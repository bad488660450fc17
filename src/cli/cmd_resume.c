/*
 * gpumem bench --resume RUN [--quiet]: continues an interrupted bench run
 * in folder RUN with the options it was started with (RUN/command), from
 * the first point its journal (RUN/points.journal, see journal.h) does not
 * list as finished. Refused with exit 2: a folder that is not a bench run,
 * a run that attempted every point, a run from another schema or suite
 * version, a corrupt journal, or a run another gpumem is writing (lock).
 */
#include "cli/commands.h"
#include "run/journal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int gm_bench_resume(int argc, char **argv, gm_bench_runner run)
{
    const char *dir = NULL;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--resume") == 0 && i + 1 < argc && !dir)
            dir = argv[++i];
        else if (strncmp(argv[i], "--resume=", 9) == 0 && !dir)
            dir = argv[i] + 9;
        else if (strcmp(argv[i], "--quiet") == 0)
            quiet = true;
        else {
            fprintf(stderr, "gpumem bench: --resume RUN takes the run's own options (only --quiet may be "
                            "added); '%s' is not allowed with it\n", argv[i]);
            return GM_EXIT_USAGE;
        }
    }
    if (!dir || !*dir) {
        fprintf(stderr, "gpumem bench: --resume needs the run's folder\n");
        return GM_EXIT_USAGE;
    }
    char err[600];
    gm_journal_state journal;
    int fd = gm_journal_open(dir, &journal, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "gpumem bench: cannot resume: %s\n", err);
        return GM_EXIT_USAGE;
    }
    if (journal.ended) {
        fprintf(stderr, "gpumem bench: cannot resume %s: the run attempted every point (status %s)\n", dir,
                journal.end_status);
        close(fd);
        return GM_EXIT_USAGE;
    }
    int n = 0;
    char **saved = gm_journal_load_args(dir, &n, err, sizeof err);
    if (!saved || n < 1 || strcmp(saved[0], "bench") != 0) {
        fprintf(stderr, "gpumem bench: cannot resume: %s\n", saved ? "the run's command is not a bench" : err);
        gm_journal_free_args(saved);
        close(fd);
        return GM_EXIT_USAGE;
    }
    /* The saved arguments, plus --quiet if asked for now. */
    char **args = calloc((size_t)n + 2, sizeof *args);
    if (!args) {
        gm_journal_free_args(saved);
        close(fd);
        return GM_EXIT_USAGE;
    }
    memcpy(args, saved, (size_t)n * sizeof *args);
    int nargs = n;
    if (quiet)
        args[nargs++] = "--quiet";
    /* The runner reads argv[-1] as the program name (meta.json). */
    char *with_prog[2 + 64 + 2];
    int rc = GM_EXIT_USAGE;
    if (nargs <= 64 + 2) {
        with_prog[0] = "gpumem";
        memcpy(with_prog + 1, args, (size_t)nargs * sizeof *args);
        with_prog[nargs + 1] = NULL;
        gm_resume resume = {dir, fd, &journal};
        rc = run(nargs, with_prog + 1, &resume);
    } else {
        fprintf(stderr, "gpumem bench: cannot resume: the run's command has too many arguments\n");
    }
    close(fd);
    free(args);
    gm_journal_free_args(saved);
    return rc;
}
