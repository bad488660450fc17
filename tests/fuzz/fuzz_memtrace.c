/*
 * Fuzz target: the memory trace reader of gpumem plot (src/plot_memory.c):
 * the input is a run's memory.csv; what it accepts is written out as the
 * memory-over-time plot's data file.
 */
#include "fuzz_input.h"
#include "report/plot_memory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".csv");
    if (!path)
        return 0;
    char dat[96], err[600];
    snprintf(dat, sizeof dat, "/tmp/gm-fuzz-%ld.dat", (long)getpid());
    int points = 0;
    gm_plot_memory_write(path, dat, &points, err, sizeof err);
    unlink(dat);
    return 0;
}
