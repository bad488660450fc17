/*
 * gpumem compare: runs read from their folders (results.csv, samples.csv,
 * meta.json), joined on their point keys, each later run compared with the
 * first (BASE) metric by metric. See docs/compare.md for the
 * rules; src/cmd_compare.c is the command, src/compare_output.c prints.
 */
#ifndef GM_COMPARE_H
#define GM_COMPARE_H

#include "lib/csv_table.h"

#include <stdbool.h>
#include <stddef.h>

/* One metric at one point of a run (a results.csv row). The strings point
 * into the run's table. */
typedef struct {
    char *key;              /* the point key, gm_point_key_join (point_key.h) */
    const char *suite, *workload, *variant, *pattern, *precision, *mode, *batch, *seq_len, *bytes, *metric, *unit,
        *status, *note;
    const char *model_bytes; /* the memory model's bytes at the point ("" when the file has none) */
    double value;           /* the median (ok rows) */
    int reps;               /* timed repetitions behind it (0 when empty) */
    double *samples;        /* from samples.csv */
    int *round;             /* each sample's round (0: a run before rounds) */
    int *member;            /* each sample's run within a group (0: the first) */
    size_t n_samples, cap_samples;
    int repeated;           /* another row of the run has the same key */
} gm_cmp_point;

typedef struct {
    char dir[4096], label[256];
    char backend[64], device[256], driver[256], version[128];
    gm_csv_table results;
    gm_cmp_point *points;   /* in file order */
    int n_points;
    gm_cmp_point **sorted;  /* by key, for lookups */
    int n_members;          /* runs in the group (1: one folder) */
    bool train_run;         /* a run without the mode column ran --mode train */
    bool back_to_back;      /* a point of the run launched back to back (GM_LAUNCHES_NOTE): the run
                             * gave a short kernel several launches a rep, so a point of one launch
                             * there filled a rep with it */
} gm_cmp_run;

/* Reads the run folder `dir`. A missing or malformed results.csv or
 * samples.csv, or a value that is not a number, is an error ("FILE:LINE:
 * why" in err); meta.json is optional (its facts print as '?').
 * `dir` may be a group, "DIR1,DIR2,...": several runs of one
 * configuration, read as one whose points hold every member's samples
 * (member says whose; value is the median over all of them) and whose
 * rows and facts are the first member's; the label is "DIR1+N". */
int gm_cmp_run_load(const char *dir, gm_cmp_run *r, char *err, size_t len);
void gm_cmp_run_free(gm_cmp_run *r);
/* The point with this key, or NULL. */
gm_cmp_point *gm_cmp_run_find(const gm_cmp_run *r, const char *key);

/* Which way a metric gets worse: +1 when it rises (times, latencies,
 * fragmentation, error counts), -1 when it falls (bandwidth, throughput,
 * largest batch), 0 when it is never flagged: the one table of
 * metric_direction.h, seen from the side of what is worse. */
int gm_cmp_worse_direction(const char *metric);

/* GM_TEST_T: Welch's (or Student's) t test on the logarithms of the units
 * (round medians, or run medians for groups); GM_TEST_MANN_WHITNEY: the U
 * test on the repetitions of one run a side, which cannot see
 * run-to-run noise. */
enum { GM_TEST_MANN_WHITNEY, GM_TEST_EXACT, GM_TEST_NONE, GM_TEST_T };
/* What a test's units are. */
enum { GM_BASIS_NONE, GM_BASIS_REPS, GM_BASIS_ROUNDS, GM_BASIS_RUNS };
/* GM_VERDICT_NOT_GATED: under a gate, a test of one run a side without
 * rounds (GM_BASIS_REPS), whose repetitions cannot separate run-to-run
 * noise from a change: the gate does not judge it. */
enum { GM_VERDICT_SAME, GM_VERDICT_REGRESSION, GM_VERDICT_IMPROVEMENT, GM_VERDICT_INFO, GM_VERDICT_UNTESTED,
       GM_VERDICT_NOT_GATED };

/* One point's metric in BASE against the same in another run. */
typedef struct {
    const gm_cmp_point *base, *other;
    int run;                /* index of the other run */
    int direction;          /* gm_cmp_worse_direction */
    int test;               /* GM_TEST_* */
    double ratio;           /* other median / base median (+inf over a zero base) */
    double ci_lo, ci_hi;    /* 95% interval of the ratio (the ratio itself for exact values) */
    double p, p_holm;       /* the test's p-value, and after Holm (NAN without a test) */
    int basis;              /* GM_BASIS_*: what the test's units are */
    int units_base, units;  /* units a side (repetitions for GM_BASIS_REPS) */
    double se, df;          /* the t test's standard error (log scale) and degrees of freedom */
    double mde;             /* the smallest relative change (0.05: 5%) the test would detect with
                             * power 0.8 at alpha over the tests of the run (Holm's first step);
                             * NAN without a test */
    int verdict;            /* GM_VERDICT_* */
} gm_cmp_result;

/* A point of one run not compared, and why ("not in NEW", "status oom in NEW"). */
typedef struct {
    const gm_cmp_point *point;
    int run;                /* the run it is missing from or not ok in */
    char reason[600];
} gm_cmp_left_out;

typedef struct {
    gm_cmp_run *runs;       /* runs[0] is BASE */
    int n_runs;
    double threshold;       /* 0.05: a change of 5% */
    double alpha;           /* significance level after Holm */
    bool gate;              /* judged for a gate: tests of GM_BASIS_REPS are not gated */
    bool cards;             /* runs of different cards: a point missing from a run under its own key
                             * is joined with the run's point of the same card role (gm_point_card_role:
                             * the stream suite at each device's own access pattern, a linear layer by
                             * our kernel or the vendor's), the first such point */
    gm_cmp_result *results; /* BASE's file order, then run order */
    int n_results;
    gm_cmp_left_out *left_out;
    int n_left_out;
    int n_regressions;
    int n_gated;            /* results the gate judged (a test or an exact value, of a metric with a
                             * direction, not GM_VERDICT_NOT_GATED) */
    int n_not_gated;        /* results of GM_VERDICT_NOT_GATED */
} gm_comparison;

/* Compares every run with runs[0]: fills results, left_out and the counts.
 * Returns 0, or -1 (out of memory). */
int gm_compare(gm_comparison *c);
void gm_comparison_free(gm_comparison *c);

/* "linear blocked per-tensor fp32 batch 4 seq 32 1MiB": the point's key
 * fields that are set, for people. */
void gm_cmp_point_label(const gm_cmp_point *p, char *out, size_t len);

#endif
