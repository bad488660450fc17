/*
 * A workload the workloads suite can run on a device: its memory model
 * (workload.h), its implementations on this device, and for one point:
 * set up its tensors, run and time one iteration, verify the output.
 */
#ifndef GM_RUNNABLE_H
#define GM_RUNNABLE_H

#include "bench/bench.h"
#include "bench/pattern.h"
#include "bench/workload.h"

#include <stdbool.h>

#define GM_MAX_IMPLS 4

typedef struct {
    const char *name;               /* as in gm_runnable_workloads */
    /* The implementations to run on dev in precision p (our kernel chosen
     * for the device type, then the vendor BLAS where it applies). */
    int (*impls)(const gm_device *dev, gm_precision p, const char **out);
    /* Sets what the implementation changes in the shape's memory model
     * (attention: naive holds the score matrix). May be NULL. */
    void (*adapt)(gm_shape *s, const char *impl);
    /* Takes the device tensors of the memory model from the pattern (in the
     * model's order), fills the inputs and builds the kernels. On failure
     * returns the status with dev->err set; *state is then NULL. */
    gm_status (*setup)(gm_device *dev, gm_pattern *pat, const gm_shape *s, const char *impl, void **state);
    /* Enqueues one iteration on queue 0 (the suite times it). */
    gm_status (*enqueue)(void *state);
    /* Test-only fault: overwrites one output value on the device. */
    gm_status (*corrupt)(void *state);
    /* Reads the output back and checks it against the CPU reference (every
     * element for small outputs, a seeded sample for large). */
    gm_status (*verify)(void *state, unsigned rep, bool *correct, char *note, size_t note_len);
    /* Reads the output tensor back as n floats (after an iteration), so
     * that tests can compare implementations. May be NULL. */
    gm_status (*output)(void *state, float *dst, size_t n);
    /* Work done by one iteration. */
    void (*work)(const gm_shape *s, double *flops, double *bytes, double *tokens);
    void (*teardown)(void *state);
} gm_runnable;

extern const gm_runnable gm_runnable_linear;
extern const gm_runnable gm_runnable_attention;
extern const gm_runnable gm_runnable_block;
extern const gm_runnable gm_runnable_kvcache;

/* Every runnable, in the order of gm_runnable_workloads (src/options.c). */
extern const gm_runnable *const gm_workload_runnables[];

#endif
