/*
 * The figures a run's report is made of, taken once from its results
 * (results.csv as gm_plot_data), its meta.json and its stress verdicts.
 * The report's headline and three answers (report.c), the card sheet of
 * compare and fleet (card_sheet.h), bench's closing answers and
 * `plan --fit RUN` all read them here, so each figure has one definition.
 * A figure the run did not measure is absent: its `has_` flag false, its
 * count 0.
 */
#ifndef GM_REPORT_FIGURES_H
#define GM_REPORT_FIGURES_H

#include "report/plot_data.h"

#include <stdbool.h>
#include <stdint.h>

#define GM_FIG_MAX_SEARCHES 128
#define GM_FIG_MAX_GEMM 8
#define GM_FIG_MAX_TRANSFERS 4
#define GM_FIG_MAX_STRESS 16

/* One largest-batch search of the oom suite (a max_batch row). */
typedef struct {
    char name[100];          /* gm_plot_point_name: "llama-3-8b bf16 inference" */
    char pattern[32], seq[24];
    char batch[32];          /* the measured largest batch, as written */
    char model[32];          /* the memory model's prediction ("": none) */
    bool fits_nothing;       /* not even batch 1 fits */
} gm_fig_search;

/* The best stream bandwidth among arrays of some sizes. */
typedef struct {
    bool has;
    double gbs;
    uint64_t bytes;
    char kernel[32], precision[32];
} gm_fig_stream;

/* A transfer latency near a block size (pinned, host to device). */
typedef struct {
    bool has;
    uint64_t bytes;
    double p50_us, p99_us;   /* p99_us NAN where the run has none */
} gm_fig_latency;

typedef struct {
    char device[200], backend[32];   /* of the first row ("": no row) */
    /* Usable memory: the oom suite's largest total and single allocation. */
    bool has_usable, has_block;
    uint64_t usable, block;
    uint64_t cap;            /* the oom suite's cap (0: uncapped or not said) */
    uint64_t advertised;     /* the memory the device advertises (0: unknown) */
    bool cpu;                /* a CPU device: its memory is the host's, so a
                              * cap is the run's, not the device's */
    /* Stream bandwidth: device memory from arrays of at least 4x the
     * last-level cache (the largest arrays where the cache is unknown),
     * cache from arrays below it. */
    uint64_t largest_stream; /* the largest array measured (0: no stream row) */
    uint64_t llc;            /* the last-level cache (0: unknown) */
    gm_fig_stream mem, cache;
    double peak_gbs;         /* 2 x memory clock x bus width / 8 (0: unknown) */
    int mem_clock_mhz, mem_bus_bits;
    /* Pinned host<->device bandwidth at the largest block, per direction
     * in row order (h2d, d2h, bidir). */
    uint64_t transfer_bytes;
    int n_transfers;
    struct {
        char direction[16];
        double gbs;
    } transfers[GM_FIG_MAX_TRANSFERS];
    gm_fig_latency latency[2];   /* near 4KiB and near 64MiB */
    /* The vendor GEMM (a linear row of card role "vendor",
     * gm_point_card_role): its best throughput per precision. */
    int n_gemm;
    struct {
        char impl[24], precision[32], unit[16];
        double value;
    } gemm[GM_FIG_MAX_GEMM];
    /* The largest-batch searches, in row order, and their longest seq. */
    int n_searches;
    gm_fig_search searches[GM_FIG_MAX_SEARCHES];
    double longest_seq;
    /* The stress checks' verdicts (RUN/stress.tap or RUN/stress/stress.tap). */
    int n_stress, n_stress_failed;
    struct {
        char name[64];
        bool ok;
    } stress[GM_FIG_MAX_STRESS];
} gm_report_figures;

/* Collects the figures of RUN from its results d, RUN/meta.json and its
 * stress verdicts (*f zeroed first). Never fails: what is missing is absent. */
void gm_report_figures_collect(const gm_plot_data *d, const char *run, gm_report_figures *f);

/* The stress verdicts of RUN alone (report_facts.c): fills f->stress. */
void gm_report_figures_stress(const char *run, gm_report_figures *f);

/* A throughput in GFLOP/s (or GOP/s) in words: "362.8 TFLOP/s" from 1000
 * up, else "44.9 GFLOP/s". Returns buf. */
const char *gm_fig_throughput(double value, const char *unit, char *buf, size_t len);

#endif
