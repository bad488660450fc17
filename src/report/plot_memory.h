/*
 * The memory-over-time plot's data: a run's memory.csv (src/memtrace.h)
 * turned into the device memory the whole run held (the sum over its
 * processes) at each change, in time order, one gnuplot block per phase.
 */
#ifndef GM_PLOT_MEMORY_H
#define GM_PLOT_MEMORY_H

#include <stddef.h>

/* Reads `csv` and writes `dat` (blocks: a title line "PHASE" then lines
 * "t_s MiB", a blank line where the phase pauses). Sets *points to the
 * lines written (0: nothing to draw). Returns 0, or -1 with "FILE:LINE:
 * why" (or why the output failed) in err. A missing csv is 0 points. */
int gm_plot_memory_write(const char *csv, const char *dat, int *points, char *err, size_t len);

#endif
