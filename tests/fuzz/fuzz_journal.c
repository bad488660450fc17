/*
 * Fuzz target: what `gpumem bench --resume RUN` reads from a run folder
 * (src/journal.c): the point journal, and the saved command line. The
 * first byte picks which file the rest of the input becomes, in a folder
 * of this process's own.
 */
#include "fuzz_input.h"
#include "run/journal.h"

#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/gm-fuzz-run-%ld", (long)getpid());
        mkdir(dir, 0700);
    }
    const char *name = data[0] % 2 ? "command" : "points.journal";
    char path[128], err[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data + 1, 1, size - 1, f);
    fclose(f);
    if (data[0] % 2) {
        int argc = 0;
        char **argv = gm_journal_load_args(dir, &argc, err, sizeof err);
        if (argv)
            gm_journal_free_args(argv);
    } else {
        gm_journal_state st;
        int fd = gm_journal_open(dir, &st, err, sizeof err);
        if (fd >= 0)
            close(fd);
    }
    unlink(path);
    return 0;
}
