/*
 * gm_device: an open device, as the harness sees it. Wraps the backend ops
 * with what every backend shares: the error record, the memory cap
 * (--mem-limit, and the default cap on CPU devices) and the accounting of
 * live allocations. `backend` is the shim (backend/shim.h) around the
 * vendor backend: it counts what the driver holds and injects the
 * test-only faults of GPUMEM_BACKEND_FAULT.
 */
#ifndef GM_DEVICE_H
#define GM_DEVICE_H

#include "backend/handle.h"
#include "device/policy.h"

/* Opens device `index` of `backend`. On failure dev->err says why.
 * dev->backend may be passed to open a closed device again: the shim's
 * call counts, injected loss and accounting then carry over. */
gm_status gm_device_open(gm_device *dev, const gm_backend *backend, int index);
void gm_device_close(gm_device *dev);

/* Sets the cap on live device memory (0 = none). */
void gm_device_set_limit(gm_device *dev, uint64_t bytes);

/* Allocation through the cap: a request that would take live_bytes past
 * mem_limit fails with GM_ERR_OOM without reaching the driver. */
gm_status gm_device_alloc(gm_device *dev, gm_mem_kind kind, size_t bytes, gm_buffer *out);
void gm_device_free(gm_device *dev, gm_buffer *buf);

/* A view into a device buffer (see gm_backend.view); it does not count
 * against the cap. Released with gm_device_free. */
gm_status gm_device_view(gm_device *dev, const gm_buffer *parent, size_t offset, size_t bytes, gm_buffer *out);

/* Free and total device memory, clipped to the cap where one is set. */
gm_status gm_device_mem_info(gm_device *dev, uint64_t *free_b, uint64_t *total_b);

/* Waits for every queue. */
gm_status gm_device_sync(gm_device *dev);

/* Gives what the driver's stream-ordered pool caches back to the device
 * (gm_backend.trim), so that the next point or probe finds the memory
 * free. On failure dev->err says why. */
gm_status gm_device_trim(gm_device *dev);

/* The default cap for a device: a share of host RAM on CPU devices (whose
 * memory is the host's), none on others. */
uint64_t gm_default_mem_limit(const gm_device_info *info);

#endif
