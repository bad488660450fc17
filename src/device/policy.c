/* Device policy (policy.h): free memory, ballast, access pattern. */
#include "device/policy.h"
#include "device/device.h"

#include <stdlib.h>

uint64_t gm_free_under_cap(const gm_device *dev, bool driver_known, uint64_t driver_free, gm_free_fallback fb,
                           gm_free_source *source)
{
    gm_free_source src;
    uint64_t free_b;
    if (dev->mem_limit) {
        uint64_t cap = dev->mem_limit > dev->live_bytes ? dev->mem_limit - dev->live_bytes : 0;
        src = driver_known && driver_free < cap ? GM_FREE_FROM_DRIVER : GM_FREE_FROM_CAP;
        free_b = src == GM_FREE_FROM_DRIVER ? driver_free : cap;
    } else if (driver_known) {
        src = GM_FREE_FROM_DRIVER;
        free_b = driver_free;
    } else if (fb == GM_FREE_UNKNOWN_ZERO) {
        src = GM_FREE_FROM_NONE;
        free_b = 0;
    } else {
        src = GM_FREE_FROM_TOTAL;
        uint64_t total = dev->info.total_mem, live = dev->live_bytes;
        free_b = fb == GM_FREE_UNKNOWN_TOTAL ? total : total > live ? total - live : 0;
    }
    if (source)
        *source = src;
    return free_b;
}

bool gm_device_free_memory(gm_device *dev, gm_free_fallback fb, uint64_t *free_b)
{
    uint64_t drv = 0, total = 0;
    bool known = dev->backend->mem_info(dev, &drv, &total) == GM_OK;
    gm_free_source src;
    *free_b = gm_free_under_cap(dev, known, drv, fb, &src);
    return src != GM_FREE_FROM_NONE;
}

uint64_t gm_device_usable_total(const gm_device *dev)
{
    return dev->mem_limit ? dev->mem_limit : dev->info.total_mem;
}

bool gm_ballast_init(gm_ballast *b, int max_chunks)
{
    b->bufs = calloc((size_t)max_chunks, sizeof *b->bufs);
    b->n = 0;
    b->max = b->bufs ? max_chunks : 0;
    b->held = 0;
    return b->bufs != NULL;
}

gm_status gm_ballast_fill(gm_device *dev, gm_ballast *b, uint64_t target, uint64_t chunk, uint64_t align)
{
    while (b->held < target && target - b->held >= align && b->n < b->max) {
        uint64_t size = (target - b->held < chunk ? target - b->held : chunk) / align * align;
        gm_status st = gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)size, &b->bufs[b->n]);
        if (st != GM_OK)
            return st == GM_ERR_OOM ? GM_OK : st;
        b->held += size;
        b->n++;
    }
    return GM_OK;
}

void gm_ballast_release(gm_device *dev, gm_ballast *b)
{
    for (int i = 0; i < b->n; i++)
        gm_device_free(dev, &b->bufs[i]);
    free(b->bufs);
    b->bufs = NULL;
    b->n = b->max = 0;
    b->held = 0;
}

bool gm_device_prefers_chunked(const gm_device *dev)
{
    return dev->info.type == GM_DEV_CPU;
}
