/*
 * The kernel profile, a diagnosis switched on by GPUMEM_KERNEL_PROFILE=1:
 * the device time of every launch (and vendor GEMM), summed by kernel
 * name, from a pair of
 * events the shim records around the launch in its queue's order. It
 * answers where a run's device time goes (an oom probe's, say: the probe
 * workers print it to worker.log after each point; the main process prints
 * what is left when the device closes).
 *
 * It adds two event records to every launch and, every
 * GM_KPROF_PENDING launches, a wait for the queue (releasing a held
 * queue first), so figures measured while it is on are not the suite's.
 * Its events are the vendor backend's, outside the shim's accounting and
 * its injected faults; a failure to record them drops that launch from the
 * profile and never fails the launch.
 */
#ifndef GM_KERNEL_PROFILE_H
#define GM_KERNEL_PROFILE_H

#include "backend/backend.h"

#include <stdbool.h>
#include <stdio.h>

#define GM_KPROF_PENDING 1024   /* launches timed before their events are read */
#define GM_KPROF_NAME 48        /* a kernel's name, cut to this length */

typedef struct gm_kernel_profile gm_kernel_profile;

/* Is GPUMEM_KERNEL_PROFILE set to 1 in the environment? */
bool gm_kprof_requested(void);

/* A profile of the device's launches through `inner`, or NULL when out of
 * host memory. */
gm_kernel_profile *gm_kprof_new(const gm_backend *inner);
/* Reads what is pending, then frees the profile (NULL: nothing). */
void gm_kprof_free(struct gm_device *dev, gm_kernel_profile *p);

/* The kernel k is called `name` (at kernel_get), and no longer (at
 * kernel_release). */
void gm_kprof_name(gm_kernel_profile *p, const gm_kernel *k, const char *name);
void gm_kprof_forget(gm_kernel_profile *p, const gm_kernel *k);

/* Around a launch of k on `queue`: before records the first event (false:
 * this launch goes unprofiled), after the second, once the launch was
 * enqueued (launched: whether it was). */
bool gm_kprof_before(struct gm_device *dev, gm_kernel_profile *p, int queue);
void gm_kprof_after(struct gm_device *dev, gm_kernel_profile *p, int queue, const gm_kernel *k, bool launched);
/* The same around another call that enqueues device work under `name`
 * (a vendor GEMM: "blas cublas bf16", "... batched" for a strided batch). */
void gm_kprof_after_named(struct gm_device *dev, gm_kernel_profile *p, int queue, const char *name, bool launched);
/* Whether GM_KPROF_PENDING launches wait to be read: the caller releases a
 * held queue, then calls gm_kprof_settle. */
bool gm_kprof_full(const gm_kernel_profile *p);
/* Waits for the pending launches and adds their time to the totals. */
void gm_kprof_settle(struct gm_device *dev, gm_kernel_profile *p);

/* Settles, then prints the totals since the last report (kernel, launches,
 * device ms, µs a launch; most time first) under `title`, and starts
 * over. Prints nothing when nothing was launched. */
void gm_kprof_report(struct gm_device *dev, gm_kernel_profile *p, FILE *f, const char *title);

#endif
