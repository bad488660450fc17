/*
 * A run folder's one-page summary, report.md and report.html (the same
 * content; the HTML self-contained, every plot's SVG inline): the device
 * and its facts (from meta.json), a table of headline numbers taken from
 * its results (usable memory, peak stream bandwidth, transfer latency near
 * 4KiB and 64MiB, the largest batch of each workload and precision at each
 * sequence length, the stress checks' verdicts), and the plots. A number
 * the run did not measure is left out; a missing or unreadable meta.json
 * leaves the facts out with a line saying why.
 */
#ifndef GM_REPORT_H
#define GM_REPORT_H

#include "report/plot_data.h"
#include "report/report_figures.h"
#include "run/run_devices.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GM_REPORT_MAX_ROWS 256

/* The device numbers of a run's meta.json that the headline and the plots
 * use; 0 where meta.json lacks one (or the backend did not tell it). */
typedef struct {
    uint64_t total_mem, mem_limit, llc;
    int mem_clock_mhz, mem_bus_bits;
    bool cpu;       /* a CPU device: its memory is the host's */
} gm_report_meta;

/* Reads RUN/meta.json into *m (zeroed first). Returns 0, or -1 when it
 * cannot be read (*m stays zero). src/report_facts.c. */
int gm_report_meta_read(const char *run, gm_report_meta *m);

typedef struct {
    char label[200], value[200];
} gm_report_row;

/* The cap the oom suite of d ran under (from its largest_alloc row's
 * note), or 0 when uncapped or not said. src/report_figures.c. */
uint64_t gm_report_oom_cap(const gm_plot_data *d);

/* What both renderings show. */
/* The three answers the report opens with: how much memory is usable, how
 * fast it is, where the models stop fitting ("" where the run did not
 * measure it). */
enum { GM_ANSWER_MEMORY, GM_ANSWER_SPEED, GM_ANSWER_FIT, GM_ANSWERS };

typedef struct {
    char label[80], value[600];
} gm_report_answer;

typedef struct {
    char title[200], device[400], facts_note[300];
    gm_report_answer answers[GM_ANSWERS];
    gm_report_row facts[32], headline[GM_REPORT_MAX_ROWS];
    int n_facts, n_headline;
    gm_report_figures fig;    /* what the answers and headline say, as numbers */
} gm_report;

/* Collects the report of RUN from its results (d), meta.json and the
 * stress verdicts (RUN/stress.tap, or RUN/stress/stress.tap when `make
 * bench` ran the stress checks into a sub-folder). */
void gm_report_collect(const gm_plot_data *d, const char *run, gm_report *r);

/* Writes RUN/report.md and RUN/report.html; `plots` names the kinds
 * rendered into RUN/plots (their SVGs are read for the HTML). Returns 0,
 * or -1 with err. */
int gm_report_write(const gm_plot_data *d, const char *run, const char *const *plots, int n_plots, char *err,
                    size_t len);

/* report.html alone (src/report_html.c). */
int gm_report_write_html(const gm_report *r, const char *run, const char *const *plots, int n_plots, char *err,
                         size_t len);

/* A multi-device run (`gpumem bench --device all`): RUN/report.md and
 * report.html with a column per device (facts and headline numbers, a
 * measure left blank where a device lacks it), then each device's plots
 * (the HTML has them inline). Each device's folder must have been plotted.
 * src/report_devices.c. */
#define GM_REPORT_MAX_DEVICES 64
int gm_report_write_devices(const char *run, const gm_run_device *devs, int n, char *err, size_t len);

#endif
