/*
 * The memory-over-time plot's data: a run's memory.csv (src/memtrace.h)
 * turned into the device memory the whole run held (the sum over its
 * processes) at each change, in time order, one gnuplot block per phase.
 */
#ifndef GM_PLOT_MEMORY_H
#define GM_PLOT_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* Reads `csv` and writes `dat` (blocks: a title line "PHASE" then lines
 * "t_s MiB", a blank line where the phase pauses). Sets *points to the
 * lines written (0: nothing to draw). Returns 0; -1 with "FILE:LINE:
 * why" in err when csv cannot be read or is malformed; -2 with err when
 * dat cannot be written. A missing csv is 0 points. */
int gm_plot_memory_write(const char *csv, const char *dat, int *points, char *err, size_t len);

/* Appends to `caps` (created when absent) a block titled "LABEL" of two
 * lines "t_s MiB": the cap (bytes) held flat from the first to the last
 * event of `phase` in `dat` (gm_plot_memory_write's output). Returns 1
 * when written, 0 when dat has no such phase, -1 with err. */
int gm_plot_memory_cap(const char *dat, const char *phase, uint64_t cap, const char *label, const char *caps,
                       char *err, size_t len);

#endif
