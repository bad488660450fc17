/*
 * A program cache for a process that builds the same kernels again and
 * again (the oom suite's probe workers: every probe sets its workload up
 * afresh). Once installed on an open device, a build of a (program,
 * variant, defines) built before returns that program, and a release keeps
 * it: each kernel program is built once per process instead of once per
 * probe. Memory is not affected: programs hold no device allocations.
 * It also times the builds, allocations and copies it forwards.
 */
#ifndef GM_PROGRAM_CACHE_H
#define GM_PROGRAM_CACHE_H

#include "backend/handle.h"

/* Puts the cache in front of dev's backend (dev->backend then points to
 * the cache's table). One device per process. */
void gm_program_cache_install(gm_device *dev);

/* Releases every cached program and restores dev->backend; call before
 * closing the device. Safe when nothing was installed. */
void gm_program_cache_release(gm_device *dev);

/* Seconds spent since the install building programs (the builds the
 * cache could not spare), in the backend's allocations and in its copies
 * (synchronous copies: the transfer; asynchronous: the enqueueing), for
 * telling where a probe's time goes. */
typedef struct {
    double build, alloc, copy;
} gm_program_cache_times;
void gm_program_cache_seconds(gm_program_cache_times *t);

#endif
