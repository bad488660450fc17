/*
 * A fleet: every run folder under a directory (a folder holding
 * results.csv and meta.json, found recursively), each taken as one GPU,
 * their `ok` rows joined on the point and metric, and each GPU's value
 * judged against the fleet's median.
 *
 * The outlier rule (gm_fleet_judge), per point and metric measured on two
 * GPUs or more, with m the median of every GPU's value:
 *   scale = max(1.4826 x MAD of the values around m (three GPUs or more),
 *               the median of the other GPUs' repetition spreads
 *                 (1.4826 x MAD of each run's samples.csv; results.csv's
 *                 stdev where a run has no samples),
 *               1% of |m|),
 *   deviation = (value - m) / scale,
 * and a GPU is flagged at that point when its deviation exceeds k in the
 * direction that is worse for the metric (metric_direction.h: time up,
 * bandwidth down, ...). The spread term leaves out the GPU judged, so a
 * bad (and often noisy) GPU does not widen its own tolerance. Two GPUs
 * have no MAD term: each sits exactly one MAD from their median, so it
 * could never flag either. The 1% floor keeps runs of near-identical
 * repetitions from flagging noise. A scale of 0 (every value 0) makes any
 * other value an infinite deviation.
 *
 * A fleet of several device models (the rows' device names) is judged
 * model by model: each GPU against the GPUs of its own model only (an
 * A100 is no outlier among H100s). A point's median and scale are then
 * those of its largest model.
 */
#ifndef GM_FLEET_H
#define GM_FLEET_H

#include "run/point_key.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *dir;                 /* the run folder, as found under the root */
    char host[128];            /* meta.json host.hostname */
    char device_id[64];        /* meta.json device.uuid, else the rows' device_id */
    char device[160];          /* the device's name */
    int points, flagged;       /* points judged and flagged on this GPU */
    double worst;              /* the worst deviation in the bad direction (0: none) */
    int worst_point;           /* its point, -1 for none */
    bool train_run;            /* a run without the mode column (schema 3 and
                                * older) that ran --mode train */
} gm_fleet_gpu;

typedef struct {
    int gpu;
    double value, spread;      /* the median; its repetitions' robust spread (else stdev) */
    double deviation;          /* set by gm_fleet_judge */
    bool flagged;
} gm_fleet_obs;


typedef struct {
    char *key[GM_POINT_KEY_FIELDS];   /* gm_point_key_columns' values */
    char *unit;
    gm_fleet_obs *obs;
    int n_obs, cap_obs;
    double median, scale;      /* set by gm_fleet_judge: the median, and the scale
                                * with every GPU's spread (each GPU is judged with
                                * the others'), of the point's largest device model;
                                * scale 0 when it has one GPU */
    int direction;             /* gm_metric_direction */
    int n_flagged;
} gm_fleet_point;

typedef struct {
    gm_fleet_gpu *gpus;
    int n_gpus;
    gm_fleet_point *points;
    int n_points, cap_points;
    int *slots;                /* hash of point keys -> index + 1 (0 empty) */
    size_t n_slots;
    long rows_read;            /* results.csv data lines read */
} gm_fleet;

void gm_fleet_init(gm_fleet *f);
void gm_fleet_release(gm_fleet *f);

/* Finds every run folder under root (root itself included) and reads each
 * one's meta.json and results.csv once, streaming. Returns 0; -1 with
 * "FILE:LINE: why" in err for a malformed file or an unreadable root, or
 * when no run folder is found. */
int gm_fleet_load(gm_fleet *f, const char *root, char *err, size_t err_len);

/* The point whose key is fields[0..GM_POINT_KEY_FIELDS): made (with
 * `unit`) if new; with unit NULL only looked up (points never move then).
 * NULL when absent, out of memory, or the key joined is over 4 KiB. */
gm_fleet_point *gm_fleet_point_find(gm_fleet *f, char **fields, const char *unit);

/* Reads gpu's samples.csv once, if there is one, and replaces the spread
 * of each of its points with the repetitions' robust spread (1.4826 x
 * their MAD) where the point has two samples or more. Returns 0, or -1
 * with "FILE:LINE: why" in err. */
int gm_fleet_read_samples(gm_fleet *f, int gpu, char *err, size_t err_len);

/* Applies the outlier rule with threshold k (> 0) to every point, model by
 * model (its observations reordered by device model, then GPU), and fills
 * each GPU's summary. Returns the number of GPUs flagged. */
int gm_fleet_judge(gm_fleet *f, double k);

#endif
