/*
 * The stress checks (`gpumem stress`): each answers one question about a
 * device under memory pressure with a TAP test point (ok / not ok) and a
 * YAML diagnostics block; each also writes its measurements as rows
 * (suite "stress") into the run folder's results.csv.
 *
 * A check fills `r` (its verdict and diagnostics) and returns 0, or -1
 * when the run cannot go on (results cannot be written, the device is
 * lost: r->diag says why, the check is `not ok`).
 */
#ifndef GM_STRESS_H
#define GM_STRESS_H

#include "bench/output_fault.h"
#include "device/device.h"
#include "run/results.h"

#include <stdbool.h>
#include <stdint.h>

/* Test-only faults (GPUMEM_FAULT) that prove the checks can fail. */
typedef enum {
    GM_STRESS_FAULT_NONE,
    GM_STRESS_FAULT_FLIP_BITS,     /* flip a bit in device memory between write and verify */
    GM_STRESS_FAULT_DROP_FREE,     /* leave one allocation unfreed (churn's leak check) */
    GM_STRESS_FAULT_CORRUPT_SWAP,  /* corrupt a swapped payload on the device */
    GM_STRESS_FAULT_THROTTLE,      /* soak: the second half of the duration runs at a quarter speed */
} gm_stress_fault;

/* The fault GPUMEM_FAULT names (NULL or empty: none). Returns 0, or -1
 * for a value that names no stress fault. */
int gm_stress_fault_parse(const char *value, gm_stress_fault *fault);

typedef struct {
    gm_device *dev;
    gm_run *run;
    double duration;               /* seconds, for churn and soak */
    double fill;                   /* share of free memory memtest and soak take */
    double throttle;               /* soak: the throughput drop that fails it */
    uint64_t seed;
    gm_stress_fault fault;
    /* GPUMEM_FAULT=corrupt-output | flip-output-bit (bench/output_fault.h):
     * memtest strikes one seeded word of every chunk before its last check. */
    gm_output_fault output_fault;
    bool output_failed;
    char error[640];
} gm_stress;

#define GM_STRESS_DIAG 2048

typedef struct {
    bool ok;
    char diag[GM_STRESS_DIAG];     /* YAML lines "key: value\n", without indentation */
} gm_stress_result;

typedef int (*gm_stress_fn)(gm_stress *s, gm_stress_result *r);

typedef struct {
    const char *name;
    const char *summary;
    gm_stress_fn run;
} gm_stress_check;

/* Every check, in the order they run, NULL-terminated. */
extern const gm_stress_check *const gm_stress_checks[];

extern const gm_stress_check gm_stress_memtest;
extern const gm_stress_check gm_stress_churn;
extern const gm_stress_check gm_stress_oom_recovery;
extern const gm_stress_check gm_stress_swap_integrity;
extern const gm_stress_check gm_stress_concurrency;
extern const gm_stress_check gm_stress_soak;

/* Appends "key: value\n" (printf-style value) to r->diag. */
void gm_stress_diag(gm_stress_result *r, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Marks r not ok, with `why` as its diagnostic `failure` unless it has
 * one already. */
void gm_stress_fail(gm_stress_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes a measurement row of check `check`. Returns 0, or -1 (with
 * s->output_failed) when the results cannot be written. */
int gm_stress_row(gm_stress *s, const char *check, const char *metric, const char *unit, double value,
                  uint64_t bytes);

/* Free device memory now, for sizing a check: the smaller of what the
 * driver reports (where it reports free memory) and what the run's cap
 * leaves; *source names the figure used: "driver", "cap", or "device
 * total" (neither known: the device's size less the live bytes). */
uint64_t gm_stress_free_memory(gm_device *dev, const char **source);

/* What a leak check compares: the run's own accounting of live device
 * bytes, always, and the driver's free device memory where the driver
 * reports it for the device itself (not on CPU devices, where the figure
 * is the host's available memory, moved by everything on the host). */
typedef struct {
    uint64_t live;
    bool driver_known;
    uint64_t driver_free;
} gm_stress_mem;

/* The driver's free memory may differ by this much and still count as
 * come back (its allocation granularity; other processes on the device
 * move it too). The accounting must match exactly. */
#define GM_STRESS_DRIVER_SLACK ((uint64_t)2 << 20)

void gm_stress_mem_now(gm_device *dev, gm_stress_mem *m);
/* Bytes of `before` not back in `now` (0 when all came back): the
 * accounting's shortfall, else the driver's beyond the slack. */
uint64_t gm_stress_mem_missing(const gm_stress_mem *before, const gm_stress_mem *now);
/* Appends the leak check's diagnostics: which figures were compared, and
 * their values before and after. */
void gm_stress_mem_diag(gm_stress_result *r, const gm_stress_mem *before, const gm_stress_mem *now);

#endif
