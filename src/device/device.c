#include "device/device.h"
#include "lib/host_memory.h"

#include "device/memtrace.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Share of host RAM a CPU device may use unless the user says otherwise. */
#define GM_CPU_DEFAULT_SHARE 0.25

gm_status gm_device_open(gm_device *dev, const gm_backend *backend, int index)
{
    /* Opening again (dev->backend): the shim's counts carry over. */
    gm_backend_shim before;
    bool again = backend == &dev->shim.table;
    if (again) {
        before = dev->shim;
        backend = before.inner;
    }
    memset(dev, 0, sizeof *dev);
    dev->backend = backend;
    dev->index = index;
    gm_status st = backend->describe(index, &dev->info, &dev->err);
    if (st != GM_OK)
        return st;
    return gm_shim_open(dev, backend, index, again ? &before : NULL);
}

void gm_device_close(gm_device *dev)
{
    if (dev->backend && dev->priv)
        gm_shim_close(dev);
    dev->priv = NULL;
}

void gm_device_set_limit(gm_device *dev, uint64_t bytes)
{
    dev->mem_limit = bytes;
}

static bool counts_against_device(gm_mem_kind kind)
{
    return kind == GM_MEM_DEVICE || kind == GM_MEM_MANAGED || kind == GM_MEM_ASYNC;
}

gm_status gm_device_alloc(gm_device *dev, gm_mem_kind kind, size_t bytes, gm_buffer *out)
{
    memset(out, 0, sizeof *out);
    if (bytes == 0)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "allocation of 0 bytes");
    bool counted = counts_against_device(kind);
    if (counted && dev->mem_limit && (bytes > dev->mem_limit - dev->live_bytes
                                      || dev->live_bytes > dev->mem_limit))
        return gm_device_fail(dev, GM_ERR_OOM, 0,
                              "%zu bytes would exceed the memory limit (%llu of %llu in use)",
                              bytes, (unsigned long long)dev->live_bytes,
                              (unsigned long long)dev->mem_limit);
    /* Pinned memory is locked in the host's RAM: more than half of what
     * the host has available would starve it (an 80 GB card's worth of
     * offloaded weights on a 128 GB host), so that is refused as out of
     * memory before the driver is asked. */
    uint64_t avail = kind == GM_MEM_PINNED ? gm_host_mem_available() : 0;
    if (avail && bytes > avail / 2)
        return gm_device_fail(dev, GM_ERR_OOM, 0,
                              "%zu bytes of pinned host memory would be more than half of the %llu the host "
                              "has available", bytes, (unsigned long long)avail);
    gm_status st = dev->backend->alloc(dev, kind, bytes, out);
    if (st != GM_OK)
        return st;
    if (counted) {
        dev->live_bytes += bytes;
        if (dev->live_bytes > dev->peak_bytes)
            dev->peak_bytes = dev->live_bytes;
        gm_memtrace_record(dev->live_bytes);
    }
    return GM_OK;
}

gm_status gm_device_view(gm_device *dev, const gm_buffer *parent, size_t offset, size_t bytes, gm_buffer *out)
{
    memset(out, 0, sizeof *out);
    if (parent->kind != GM_MEM_DEVICE || parent->is_view || bytes == 0 || offset % GM_VIEW_ALIGN
        || offset > parent->bytes || bytes > parent->bytes - offset)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "view of %zu bytes at %zu outside a buffer of %zu", bytes,
                              offset, parent->bytes);
    gm_status st = dev->backend->view(dev, parent, offset, bytes, out);
    if (st == GM_OK)
        out->is_view = true;
    return st;
}

void gm_device_free(gm_device *dev, gm_buffer *buf)
{
    if (!buf || (!buf->handle && !buf->host))
        return;
    if (buf->is_view) {
        dev->backend->free(dev, buf);
        memset(buf, 0, sizeof *buf);
        return;
    }
    dev->backend->free(dev, buf);
    if (counts_against_device(buf->kind)) {
        dev->live_bytes -= buf->bytes;
        gm_memtrace_record(dev->live_bytes);
    }
    memset(buf, 0, sizeof *buf);
}

gm_status gm_device_mem_info(gm_device *dev, uint64_t *free_b, uint64_t *total_b)
{
    uint64_t f = 0, t = 0;
    gm_status st = dev->backend->mem_info(dev, &f, &t);
    if (st != GM_OK)
        return st;
    if (dev->mem_limit) {
        if (t > dev->mem_limit)
            t = dev->mem_limit;
        uint64_t cap_free = dev->mem_limit > dev->live_bytes ? dev->mem_limit - dev->live_bytes : 0;
        if (f > cap_free)
            f = cap_free;
    }
    *free_b = f;
    *total_b = t;
    return GM_OK;
}

gm_status gm_device_sync(gm_device *dev)
{
    return dev->backend->synchronize(dev, -1);
}

gm_status gm_device_trim(gm_device *dev)
{
    return dev->backend->trim(dev);
}

uint64_t gm_default_mem_limit(const gm_device_info *info)
{
    if (info->type != GM_DEV_CPU)
        return 0;
    uint64_t avail = gm_host_mem_available();
    uint64_t cap = (uint64_t)((double)avail * GM_CPU_DEFAULT_SHARE);
    if (info->total_mem && (cap == 0 || cap > info->total_mem))
        cap = info->total_mem;
    return cap;
}
