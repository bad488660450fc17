/*
 * report.md: a run folder's one-page summary. The device, a table of
 * headline numbers taken from its results (usable memory, peak stream
 * bandwidth, transfer latency at the smallest and largest block, the
 * largest batch of each workload and precision at each sequence length),
 * and the plots rendered beside it. A number the run did not measure is
 * left out.
 */
#ifndef GM_REPORT_H
#define GM_REPORT_H

#include "plot_data.h"

#include <stddef.h>

/* Writes RUN/report.md; `plots` names the kinds rendered into RUN/plots.
 * Returns 0, or -1 with err. */
int gm_report_write(const gm_plot_data *d, const char *run, const char *const *plots, int n_plots, char *err,
                    size_t len);

#endif
