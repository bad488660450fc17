/*
 * The rows of a results.csv that each kind of plot shows, sorted into
 * panels and series, and the data files gnuplot reads (plots/panels.gp).
 */
#ifndef GM_PLOT_DATA_H
#define GM_PLOT_DATA_H

#include "lib/csv_table.h"

#include <stddef.h>

/* A results.csv in memory: its lines split into fields. */
typedef struct {
    gm_csv_table table;           /* the file (src/csv_table.h) */
    char ***fields;               /* table.fields: fields[row][column] */
    int n_rows, n_cols;
    int col_backend, col_device, col_suite, col_workload, col_variant, col_pattern, col_precision, col_batch, col_seq, col_bytes,
        col_metric, col_value, col_status, col_note;
    int col_model, col_mode;      /* -1 in a run of schema 3 or older */
    int col_unit;                 /* -1 where the file has none */
} gm_plot_data;

/* Reads `path`. Returns 0, or -1 with "FILE:LINE: why" in err. */
int gm_plot_data_load(const char *path, gm_plot_data *d, char *err, size_t len);
void gm_plot_data_free(gm_plot_data *d);

/* How plots and the report name the point of a workloads or oom row r:
 * "<model> <precision> <mode>" for a whole model (the block workload with
 * a model: "llama-3-8b bf16 inference"), else "<workload> <variant>
 * <precision>", with " train" for a training point (another workload's
 * row may name the model too: its layer's width is --hidden's). Returns
 * buf. */
const char *gm_plot_point_name(const gm_plot_data *d, char *const *r, char *buf, size_t len);

/* The family of a stream kernel: the kernels that move bytes alike share
 * one ("read-write", "copy-scale", "add-triad", "dot"); *dashed is 1 for
 * the second kernel of a pair. The bandwidth plot draws a panel a family
 * (the first kernel solid, the second dashed, a colour per precision) and
 * the card sheet sums ratios up by family. An unknown kernel is a family
 * of its own. */
const char *gm_plot_stream_family(const char *kernel, int *dashed);

#define GM_PLOT_KINDS 8
#define GM_PLOT_MAX_PANELS 8

typedef struct {
    char panel[32], series[128];
    double x, y;
    int dashed;                   /* drawn dashed (model prediction, p99) */
    char band[96];                /* p50 and p99 of one band share this name */
    char colour[128];             /* a series shares its colour with every series
                                   * of the same key: a measured line with its
                                   * model, p50 with p99 and their band, two
                                   * kernels of a panel in one precision */
    int has_hi;                   /* y_hi: the band's upper edge at x */
    double y_hi;
    int off_axis;                 /* y <= 0 where the kind's y axis is logarithmic
                                   * (a batch of 0: nothing fits): not drawn */
} gm_plot_point;

typedef struct {
    const char *kind;             /* the script: plots/KIND.gp */
    char panels[GM_PLOT_MAX_PANELS][32];
    int n_panels;
    gm_plot_point *points;
    int n_points;
    char vars[256];               /* more gnuplot assignments ("llc=33554432; "), or "" */
} gm_plot_set;

/* The name of plot kind k (0 to GM_PLOT_KINDS - 1): its script is
 * plots/NAME.gp. The memory-over-time plot ("memory", plot_memory.h) is
 * drawn apart from these. */
const char *gm_plot_kind_name(int k);

/* The points of plot kind k (0 to GM_PLOT_KINDS - 1). Returns 0 or -1
 * (out of memory). */
int gm_plot_select(const gm_plot_data *d, int k, gm_plot_set *set);
void gm_plot_set_free(gm_plot_set *set);

/* Writes base.PANEL.dat (and base.PANEL.dashed.dat) for every panel, and
 * base.PANEL.band.dat (blocks of "x low high") where points have a band;
 * off-axis points are left out of them (a series that keeps others says
 * where in its title: "name (0 at 8192)"). base.PANEL.colours gives each
 * block its colour: three lines (solid, dashed, band blocks), each a
 * colour number a block, numbered by colour key in the panel. base.PANEL.off names, each in
 * double quotes on one line, the solid series of the panel with no point
 * on the axes (plots/panels.gp puts them in the legend; a panel with
 * nothing to draw says so instead): empty when there is none.
 * Returns 0, or -1 with err. */
int gm_plot_write(const gm_plot_set *set, const char *base, char *err, size_t len);

/* Where the data files of plot kind `kind` rendered into DIR go: DIR holds
 * what a user opens (KIND.png, KIND.svg), its subfolder DIR/data what
 * gnuplot reads and says (KIND.PANEL.dat, .colours, .off, the logs).
 * Creates DIR/data when missing and writes "DIR/data/KIND" into base:
 * gm_plot_write's base and the `base` the plot scripts read. Returns 0,
 * or -1 with err when the folder cannot be made or the path is too long. */
#define GM_PLOT_DATA_FOLDER "data"
int gm_plot_data_base(const char *dir, const char *kind, char *base, size_t len, char *err, size_t err_len);

/* Runs gnuplot on the kind's script, plots/KIND.gp (found next to the
 * binary or in the working folder), over the data files at
 * gm_plot_data_base(DIR, KIND) for every panel of set, writing DIR/KIND.png
 * and DIR/KIND.svg (gnuplot's messages in DIR/data/KIND.png.log and
 * .svg.log), with set->vars assigned before the script runs.
 * Returns 0, or -1 with err when the script is missing or gnuplot fails. */
int gm_plot_render(const gm_plot_set *set, const char *dir, char *err, size_t len);

#endif
