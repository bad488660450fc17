/*
 * The backend shim: one wrapper around whichever backend a device opens
 * (gm_device_open installs it; dev->backend is then the shim's table and
 * the vendor backend sits behind it). It forwards every op and does three
 * things no vendor backend has to know about (and marks each call's start
 * and end for the hung-device watchdog, watchdog.h, and with
 * GPUMEM_KERNEL_PROFILE=1 times every launch, kernel_profile.h):
 *
 *   - the rule of a held queue (backend.h, queue_hold): while one is held,
 *     any op but launch and event_record first releases it, so that no
 *     call can wait for a queue that waits for the host;
 *
 *   - accounting of what the driver holds for this process: live buffers
 *     (and their bytes), views, mappings, programs, kernels and events,
 *     counted on success of the op that makes each and on the op that
 *     releases it. A run's leak check (leak_check.h) reads it, so a leak of
 *     our own allocations is caught on every backend.
 *   - test-only fault injection, from the environment:
 *         GPUMEM_BACKEND_FAULT=OP:N:MODE
 *     OP names an op of the table (open, mem_info, alloc, view, fill, copy,
 *     map, unmap, prefetch, program_build, kernel_get, launch,
 *     event_record, event_elapsed_ms, synchronize, blas_gemm, trim, free,
 *     queue_hold), N
 *     its call (1-based, counted per process from the device's open), and
 *     MODE what happens there:
 *         lost  the call fails with GM_ERR_DEVICE_LOST, and so does every
 *               later call that can fail, as on a device that vanished
 *               (releases still release: the host side must not leak);
 *         oom   that one call fails with GM_ERR_OOM;
 *         leak  (free only) the buffer is not handed back to the driver
 *               until the device closes: a deliberate leak for the check;
 *         hang  that call never returns, as on a device that stopped
 *               answering: the watchdog's case (watchdog.h).
 *     Each process counts its own calls: the oom suite's probe workers
 *     (gpumem __worker) inherit the switch and fail at their own N-th call.
 *     GPUMEM_FAULT (bench, stress and worker faults) is a separate switch.
 */
#ifndef GM_BACKEND_SHIM_H
#define GM_BACKEND_SHIM_H

#include "backend/backend.h"

#include <stdio.h>

typedef enum {
    GM_OP_OPEN, GM_OP_MEM_INFO, GM_OP_ALLOC, GM_OP_VIEW, GM_OP_FILL, GM_OP_COPY, GM_OP_MAP, GM_OP_UNMAP,
    GM_OP_PREFETCH, GM_OP_PROGRAM_BUILD, GM_OP_KERNEL_GET, GM_OP_LAUNCH, GM_OP_EVENT_RECORD,
    GM_OP_EVENT_ELAPSED_MS, GM_OP_SYNCHRONIZE, GM_OP_BLAS_GEMM, GM_OP_TRIM, GM_OP_FREE, GM_OP_QUEUE_HOLD,
    GM_OP_COUNT
} gm_backend_op;

typedef enum { GM_INJECT_NONE, GM_INJECT_LOST, GM_INJECT_OOM, GM_INJECT_LEAK, GM_INJECT_HANG } gm_inject_mode;

typedef struct {
    gm_backend_op op;
    long at;                  /* the op's call number that fails */
    gm_inject_mode mode;      /* NONE: no fault */
} gm_inject_spec;

/* What the driver holds for this process, as the shim saw it made. */
typedef struct {
    uint64_t buffers, bytes;  /* allocations (not views) and their bytes */
    uint64_t views, maps, programs, kernels, events;
} gm_live_objects;

typedef struct {
    const gm_backend *inner;  /* the vendor backend */
    gm_backend table;         /* what dev->backend points to */
    gm_inject_spec spec;
    long calls[GM_OP_COUNT];
    bool lost;                /* an injected loss happened: every call fails */
    char lost_at[64];         /* "alloc call 3" */
    gm_live_objects live;
    uint64_t async_allocs;    /* stream-ordered pool allocations made */
    uint64_t blas_calls;      /* vendor BLAS calls made */
    uint64_t managed_bytes;   /* bytes of managed allocations made, summed */
    gm_buffer held;           /* the buffer a `leak` fault kept back */
    gm_hold *hold;            /* the queue held now, if any */
    struct gm_kernel_profile *kprof;  /* GPUMEM_KERNEL_PROFILE=1 (kernel_profile.h), else NULL */
} gm_backend_shim;

/* Parses a GPUMEM_BACKEND_FAULT value (NULL or empty: no fault). Returns 0,
 * or -1 with a one-line reason in err. */
int gm_inject_parse(const char *text, gm_inject_spec *spec, char *err, size_t err_len);

/* The switch's value now, parsed; an unparsable one counts as none (the
 * commands refuse it first, through gm_inject_parse). */
gm_inject_spec gm_inject_from_env(void);

/* The op's name as the switch spells it. */
const char *gm_backend_op_name(gm_backend_op op);

struct gm_device;
/* Puts the shim between dev and `inner`, then opens device `index`
 * through it (the open op counts and can fail like any other). `before`
 * (NULL for a first open) is the shim of the same device before it was
 * closed: its counts, loss and accounting go on. */
gm_status gm_shim_open(struct gm_device *dev, const gm_backend *inner, int index, const gm_backend_shim *before);
/* Closes the device through the shim, handing back a buffer a `leak`
 * fault kept; prints the kernel profile's rest to stderr where one is
 * kept. */
void gm_shim_close(struct gm_device *dev);
/* Prints the kernel profile since its last report under `title` and
 * starts over; nothing where no profile is kept (kernel_profile.h). */
void gm_shim_kernel_profile_report(struct gm_device *dev, FILE *f, const char *title);

#endif
