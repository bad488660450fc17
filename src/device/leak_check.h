/*
 * The device leak check of a whole bench or stress run: what the driver
 * holds for this process at the end must be what it held at the start.
 *
 * Two figures are compared:
 *   - the backend shim's accounting (backend/shim.h) of live buffers, views,
 *     mappings, programs, kernels and events: exact, on every backend (on
 *     PoCL too), for everything this process made;
 *   - the driver's free device memory, where the driver reports it for the
 *     device itself (not on CPU devices, whose figure is the host's
 *     available memory). Drivers keep some memory once used (the grown
 *     local-memory reservation of kernels, module images), so it must come
 *     back within GM_LEAK_DRIVER_SLACK, and within the bytes of managed
 *     memory the run allocated on top of that: the driver's unified-memory
 *     manager may keep device pages it migrated for managed memory after
 *     they are freed (an H100 came back 112MiB short after the swap
 *     suite, which allocates 16MiB managed buffers, with every object
 *     released). It is not compared after a
 *     run that used the stream-ordered pool or the vendor BLAS, which keep
 *     their memory until the device closes by design.
 */
#ifndef GM_LEAK_CHECK_H
#define GM_LEAK_CHECK_H

#include "device/device.h"

#define GM_LEAK_DRIVER_SLACK ((uint64_t)64 << 20)

typedef struct {
    gm_live_objects live;     /* the shim's accounting */
    bool driver_known;
    uint64_t driver_free;
} gm_mem_snapshot;

typedef struct {
    gm_mem_snapshot start, end;
    bool checked;             /* false: the run never reached the check */
    bool leaked;
    bool driver_compared;
    char detail[300];         /* what leaked, or which figures matched */
} gm_leak_report;

/* The driver's free memory for the device itself; false where it has none
 * (CPU devices, or the query fails: dev->err is left as it was). */
bool gm_driver_free_memory(gm_device *dev, uint64_t *free_b);

void gm_mem_snapshot_take(gm_device *dev, gm_mem_snapshot *m);

/* The bytes of free device memory the driver may lack at a run's end
 * without a leak: GM_LEAK_DRIVER_SLACK, plus the managed bytes the run
 * allocated (saturating). */
uint64_t gm_leak_driver_allowance(uint64_t managed_bytes);

/* Takes the end snapshot and compares it with r->start (taken by the
 * caller when the run began). Returns true when something leaked, with
 * r->detail saying what. */
bool gm_leak_check(gm_device *dev, gm_leak_report *r);

#endif
