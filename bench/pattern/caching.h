/*
 * Caching allocators, as ML frameworks put them between the model and the
 * driver: device memory is reserved in regions and handed out as views
 * (offsets and sizes multiples of GM_VIEW_ALIGN), best fit, split and
 * coalesced; freed blocks stay cached for the next request.
 *   pool      PyTorch-like: requests under 1MiB share 2MiB segments,
 *             1-10MiB ones get 20MiB segments, larger ones their size
 *             rounded to 2MiB; on OOM the cached empty segments are
 *             returned to the driver and the request retried once.
 *   growth    TensorFlow-like allow_growth: regions are reserved on demand,
 *             each twice the last (at least the request), and never given
 *             back.
 *   prealloc  reserve first: one region of `prealloc` bytes at the first
 *             request (the pattern passes a share of free memory), no
 *             growth: a request that finds no block there is OOM.
 * Regions count against the device's cap; the views do not.
 */
#ifndef GM_CACHING_H
#define GM_CACHING_H

#include "device/device.h"

typedef enum { GM_CACHE_POOL, GM_CACHE_GROWTH, GM_CACHE_PREALLOC } gm_cache_policy;

typedef struct gm_cache_block gm_cache_block;
typedef struct gm_cache_region gm_cache_region;

typedef struct {
    gm_device *dev;
    gm_cache_policy policy;
    uint64_t prealloc;            /* PREALLOC: the region's size */
    gm_cache_region *regions;
    uint64_t reserved;            /* bytes of the regions */
    uint64_t in_use;              /* bytes of blocks handed out */
    uint64_t last_region;         /* GROWTH: the size of the newest region */
    unsigned long regions_made, cache_hits;
} gm_cache;

void gm_cache_init(gm_cache *c, gm_device *dev, gm_cache_policy policy, uint64_t prealloc);

/* Names a block handed out, for gm_cache_free. */
typedef struct {
    gm_cache_region *region;
    uint64_t offset;
} gm_cache_ticket;

/* A block of at least `bytes` as a view in *out, and its ticket. On
 * failure dev->err says why (GM_ERR_OOM when neither the cache nor the
 * device has room). */
gm_status gm_cache_alloc(gm_cache *c, uint64_t bytes, gm_buffer *out, gm_cache_ticket *ticket);

/* Returns a block to the cache. Its view is released by its holder
 * (gm_device_free), before or after. */
void gm_cache_free(gm_cache *c, const gm_cache_ticket *ticket);

/* What a fresh POOL cache reserves from the device to hand out blocks of
 * bytes[0..n) in this order, none freed meanwhile: the regions its rules
 * would add, in bytes (0 on overflow or n > 64). The oom suite's search
 * predicts from it where the pool's segments run out. */
uint64_t gm_cache_pool_reserve(const uint64_t *bytes, int n);

/* Would a fresh GROWTH cache, with `budget` bytes of device memory, hand
 * out blocks of bytes[0..n) in this order, none freed (doubling regions,
 * just enough where doubling does not fit)? */
bool gm_cache_growth_fits(const uint64_t *bytes, int n, uint64_t budget);

/* Gives every region without a live block back to the driver. */
void gm_cache_trim(gm_cache *c);

/* Gives everything back; no block may be live. */
void gm_cache_release(gm_cache *c);

#endif
