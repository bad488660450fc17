/*
 * Device policy: the decisions every suite and check makes about an open
 * device, each in one place: how much memory is free under the cap, how
 * to hold a share of it as pressure (ballast), and which access pattern
 * its kernels use.
 */
#ifndef GM_POLICY_H
#define GM_POLICY_H

#include "backend/handle.h"

#include <stdbool.h>
#include <stdint.h>

/* Where no cap is set and the driver cannot say how much is free. */
typedef enum {
    GM_FREE_UNKNOWN_ZERO,        /* unknown: 0 */
    GM_FREE_UNKNOWN_TOTAL,       /* the device's advertised total */
    GM_FREE_UNKNOWN_TOTAL_LIVE,  /* the advertised total less the live bytes */
} gm_free_fallback;

/* Where a free-memory figure came from. */
typedef enum {
    GM_FREE_FROM_DRIVER,         /* the driver's figure (below the cap's) */
    GM_FREE_FROM_CAP,            /* the cap less the live bytes */
    GM_FREE_FROM_TOTAL,          /* the fallback on the device total */
    GM_FREE_FROM_NONE,           /* not known (GM_FREE_UNKNOWN_ZERO): 0 */
} gm_free_source;

/*
 * Free device memory under the cap, from a driver reading (driver_known,
 * driver_free): with a cap, the smaller of the driver's figure and the cap
 * less the live bytes (0 if live bytes exceed the cap); with no cap, the
 * driver's figure; with neither, what fb says. Sets *source if not NULL.
 */
uint64_t gm_free_under_cap(const gm_device *dev, bool driver_known, uint64_t driver_free, gm_free_fallback fb,
                           gm_free_source *source);

/* gm_free_under_cap with the driver read through backend->mem_info (as
 * gm_device_mem_info reads it; a failed read may set dev->err). Returns
 * false when the figure is not known (GM_FREE_FROM_NONE; *free_b = 0). */
bool gm_device_free_memory(gm_device *dev, gm_free_fallback fb, uint64_t *free_b);

/* The device's memory as the suites may use it: the cap where one is
 * set, else the advertised total. */
uint64_t gm_device_usable_total(const gm_device *dev);

/*
 * Pressure ballast: device allocations that hold memory so that a
 * measurement runs with less of it free.
 */
typedef struct {
    gm_buffer *bufs;
    int n, max;
    uint64_t held;               /* bytes held */
} gm_ballast;

/* Makes room for up to max_chunks allocations. Returns false if host
 * memory ran out (b is then empty and may be released). */
bool gm_ballast_init(gm_ballast *b, int max_chunks);

/*
 * Allocates device memory in chunks of at most chunk bytes, each rounded
 * down to a multiple of align (1: no rounding), until about target bytes
 * are held, a chunk would be smaller than align, max_chunks are held, or
 * an allocation fails. An OOM is no error (the device is as full as it
 * gets): returns GM_OK. Any other failure returns its status, with
 * dev->err set; what was held stays held.
 */
gm_status gm_ballast_fill(gm_device *dev, gm_ballast *b, uint64_t target, uint64_t chunk, uint64_t align);

/* Frees every chunk and the list. Safe on an empty or failed ballast. */
void gm_ballast_release(gm_device *dev, gm_ballast *b);

/*
 * Does this device's kernels use the chunked access pattern (each work
 * item a contiguous range of its own) rather than grid-stride? CPU
 * devices do: their cores want contiguous ranges; GPUs want adjacent
 * threads on adjacent elements.
 */
bool gm_device_prefers_chunked(const gm_device *dev);

#endif
